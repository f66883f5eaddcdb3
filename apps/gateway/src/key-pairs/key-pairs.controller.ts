import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
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
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../identity/scopes';

@ApiTags('key-pairs')
@Controller(routes('key-pairs'))
export class KeyPairsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent()
  @Answers(Messages.keyPair.create, {
    status: 201,
    description: 'The private key is generated and kept by the service',
  })
  @ApiProblems()
  create(@Body() dto: CreateKeyPairDto): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.create, dto);
  }

  @Get()
  @AllowScopes('read')
  @Answers(Messages.keyPair.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<KeyPairListView> {
    return this.bus.send(Messages.keyPair.list, query);
  }

  @Get(':id')
  @AllowScopes('read')
  @Answers(Messages.keyPair.get)
  @ApiProblems(404)
  get(@Param('id', uuidParam) id: string): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.get, { id });
  }

  @Delete(':id')
  @HttpCode(200)
  @Answers(Messages.keyPair.delete)
  @ApiProblems(404, 409)
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.keyPair.delete, { id });
  }
}
