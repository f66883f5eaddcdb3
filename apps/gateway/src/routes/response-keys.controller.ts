import { Controller, Delete, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { MessageView } from '@licensing/contracts';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { AllowScopes } from '../http/route-access';
import { ResponseKeyJwk, ResponseKeySetView } from '../signed-answers/response-key.dto';
import { ResponseKeysService } from '../signed-answers/response-keys.service';

const orgOf = (request: FastifyRequest): string => request.auth!.orgId;

@ApiTags('organizations')
@Controller(routes('organizations/current/response-keys'))
export class ResponseKeysController {
  constructor(private readonly responseKeys: ResponseKeysService) {}

  @Get()
  @Operation({
    id: 'getResponseKeys',
    summary: "Get the organization's response keys",
    description:
      "The public keys that sign the organization's online answers (`Licensing-Signature` on verify, " +
      'validate, check-revocation and sync when the request sends `Licensing-Nonce`), as a JWK Set: ' +
      'Ed25519, the `active` key (created on first use) first, then a `next` key and `retired` ones ' +
      "if there are. Ship it with the application, and pick the key by the signature's `kid`.",
  })
  @AllowScopes('read', 'client')
  @ApiOkResponse({ type: ResponseKeySetView })
  @ApiProblems()
  get(@Req() request: FastifyRequest): Promise<ResponseKeySetView> {
    return this.responseKeys.jwks(orgOf(request));
  }

  @Post()
  @Operation({
    id: 'createNextResponseKey',
    summary: 'Publish the next response key',
    description:
      'The first step of a rotation: a new key, `next`, published in the set at once but signing ' +
      'nothing yet. Ship the new set with your applications, then activate the key. One `next` key ' +
      'at a time (`409`).',
  })
  @ApiCreatedResponse({ type: ResponseKeyJwk })
  @ApiProblems(['conflict', 'the organization has a next key already'])
  create(@Req() request: FastifyRequest): Promise<ResponseKeyJwk> {
    return this.responseKeys.createNext(orgOf(request));
  }

  @Post(':id/activate')
  @Operation({
    id: 'activateResponseKey',
    summary: 'Rotate: make a key the signing one',
    description:
      'The key signs every answer from now on, on every gateway; the key that signed until now is ' +
      '`retired`, still published, so that answers it signed still verify. Answers the set.',
  })
  @HttpCode(200)
  @ApiOkResponse({ type: ResponseKeySetView })
  @ApiProblems(['not_found', 'the key does not exist in the organization'])
  activate(@Req() request: FastifyRequest, @Param('id', uuidParam) id: string): Promise<ResponseKeySetView> {
    return this.responseKeys.activate(orgOf(request), id);
  }

  @Delete(':id')
  @Operation({
    id: 'deleteResponseKey',
    summary: 'Delete a response key',
    description:
      'Removes a `next` or `retired` key from the set: answers it signed no longer verify with it. ' +
      'The active key cannot be deleted (`409`): activate another first.',
  })
  @HttpCode(200)
  @ApiOkResponse({ type: MessageView })
  @ApiProblems(
    ['not_found', 'the key does not exist in the organization'],
    ['conflict', 'the key is the active one'],
  )
  delete(@Req() request: FastifyRequest, @Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.responseKeys.delete(orgOf(request), id);
  }
}
