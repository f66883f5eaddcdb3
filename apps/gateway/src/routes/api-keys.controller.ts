import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { MessageView, PageQueryDto } from '@licensing/contracts';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import {
  ApiKeyListView,
  CreateApiKeyDto,
  CreatedApiKeyView,
  CurrentApiKeyView,
} from '../identity/api-key.dto';
import { ApiKeysService } from '../identity/api-keys.service';
import { AllowScopes } from '../http/route-access';

const orgOf = (request: FastifyRequest): string => request.auth!.orgId;

@ApiTags('api-keys')
@Controller(routes('api-keys'))
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @Operation({
    id: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Creates an API key of the organization with 1 to 3 scopes: `admin` (everything), `read` (every ' +
      'read, plus verify and check-revocation) or `client` (what a shipped application needs). The ' +
      'key (`lk_…`) is in this answer only: the platform stores its hash.',
    example: { name: 'photo-editor 2.4', scopes: ['client'] },
  })
  @Idempotent({ secretFields: ['key'] })
  @ApiCreatedResponse({ type: CreatedApiKeyView, description: '`key` is shown only in this response' })
  @ApiProblems()
  create(@Req() request: FastifyRequest, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.apiKeys.create(orgOf(request), dto);
  }

  @Get()
  @Operation({
    id: 'listApiKeys',
    summary: 'List API keys',
    description:
      "The organization's API keys that are not revoked, newest first: names, scopes and prefixes, never a key.",
  })
  @AllowScopes('read')
  @ApiOkResponse({ type: ApiKeyListView })
  @ApiProblems()
  list(@Req() request: FastifyRequest, @Query() query: PageQueryDto): Promise<ApiKeyListView> {
    return this.apiKeys.list(orgOf(request), query);
  }

  @Get('current')
  @Operation({
    id: 'getCurrentApiKey',
    summary: 'Describe the calling API key',
    description:
      'The API key this request is made with: its name, scopes and prefix, and its organization. A ' +
      'client learns from it what it may do (the console shows no write control to a `read` key).',
  })
  @AllowScopes('read', 'client')
  @ApiOkResponse({ type: CurrentApiKeyView })
  @ApiProblems()
  current(@Req() request: FastifyRequest): Promise<CurrentApiKeyView> {
    return this.apiKeys.current(request.auth!);
  }

  @Delete(':id')
  @Operation({
    id: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: 'Revokes the key at once, on every gateway. It leaves the list; revoking is final.',
  })
  @HttpCode(200)
  @ApiOkResponse({ type: MessageView })
  @ApiProblems(['not_found', 'the API key does not exist in the organization, or is already revoked'])
  revoke(@Req() request: FastifyRequest, @Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.apiKeys.revoke(orgOf(request), id);
  }
}
