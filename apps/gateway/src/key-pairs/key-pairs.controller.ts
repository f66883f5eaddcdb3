import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CreateKeyPairDto,
  KeyPairListView,
  KeyPairView,
  MessageView,
  PageQueryDto,
  Messages,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../identity/scopes';

@ApiTags('key-pairs')
@Controller(routes('key-pairs'))
export class KeyPairsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent()
  @ApiCreatedResponse({
    type: KeyPairView,
    description: 'The private key is generated and kept by the service',
  })
  @ApiProblems()
  create(@Body() dto: CreateKeyPairDto): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.create, dto);
  }

  @Get()
  @AllowScopes('read')
  @ApiOkResponse({ type: KeyPairListView })
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<KeyPairListView> {
    return this.bus.send(Messages.keyPair.list, query);
  }

  @Get(':id')
  @AllowScopes('read')
  @ApiOkResponse({ type: KeyPairView })
  @ApiProblems(404)
  get(@Param('id', uuidParam) id: string): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.get, { id });
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOkResponse({ type: MessageView })
  @ApiProblems(404, 409)
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.keyPair.delete, { id });
  }
}
