import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes } from '../http/routes';
import { AllowScopes } from '../identity/scopes';
import { ResponseKeySetView } from './response-key.dto';
import { ResponseKeysService } from './response-keys.service';

@ApiTags('organizations')
@Controller(routes('organizations'))
export class ResponseKeysController {
  constructor(private readonly responseKeys: ResponseKeysService) {}

  @Get('current/response-keys')
  @Operation({
    id: 'getResponseKeys',
    summary: "Get the organization's response keys",
    description:
      "The public keys that sign the organization's online answers (`Licensing-Signature` on verify, " +
      'validate, check-revocation and sync when the request sends `Licensing-Nonce`), as a JWK Set: ' +
      'Ed25519, one per organization, created on first use. Ship it with the application.',
  })
  @AllowScopes('read', 'client')
  @ApiOkResponse({ type: ResponseKeySetView })
  @ApiProblems()
  get(@Req() request: FastifyRequest): Promise<ResponseKeySetView> {
    return this.responseKeys.jwks(request.auth!.orgId);
  }
}
