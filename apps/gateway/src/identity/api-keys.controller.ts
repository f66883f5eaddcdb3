import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { MessageView, PageQueryDto } from '@licensing/contracts';
import { ApiProblems } from '../http/api-problems';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { ApiKeyListView, CreateApiKeyDto, CreatedApiKeyView } from './api-key.dto';
import { ApiKeysService } from './api-keys.service';
import { AllowScopes } from './scopes';

const orgOf = (request: FastifyRequest): string => request.auth!.orgId;

@ApiTags('api-keys')
@Controller(routes('api-keys'))
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @Idempotent({ secretFields: ['key'] })
  @ApiCreatedResponse({ type: CreatedApiKeyView, description: '`key` is shown only in this response' })
  @ApiProblems()
  create(@Req() request: FastifyRequest, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.apiKeys.create(orgOf(request), dto);
  }

  @Get()
  @AllowScopes('read')
  @ApiOkResponse({ type: ApiKeyListView })
  @ApiProblems()
  list(@Req() request: FastifyRequest, @Query() query: PageQueryDto): Promise<ApiKeyListView> {
    return this.apiKeys.list(orgOf(request), query);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOkResponse({ type: MessageView })
  @ApiProblems(404)
  revoke(@Req() request: FastifyRequest, @Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.apiKeys.revoke(orgOf(request), id);
  }
}
