import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import {
  ActivationListView,
  ActivationView,
  CreateActivationDto,
  ListActivationsQueryDto,
  MessageView,
  Messages,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../identity/scopes';
import { LimitPerLicense } from '../rate-limits/rate-limit.hook';

@ApiTags('activations')
@Controller(routes('activations'))
export class ActivationsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent()
  @AllowScopes('client')
  @LimitPerLicense()
  @ApiCreatedResponse({ type: ActivationView, description: 'A new seat' })
  @ApiOkResponse({
    type: ActivationView,
    description: 'This fingerprint already held a seat: the same activation',
  })
  @ApiProblems(404, 409, 422)
  async create(
    @Body() dto: CreateActivationDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ActivationView> {
    const { activation, created } = await this.bus.send(Messages.activation.create, dto);
    void reply.status(created ? 201 : 200);
    return activation;
  }

  @Get()
  @AllowScopes('read')
  @Answers(Messages.activation.list)
  @ApiProblems()
  list(@Query() query: ListActivationsQueryDto): Promise<ActivationListView> {
    return this.bus.send(Messages.activation.list, query);
  }

  @Post(':id/heartbeat')
  @HttpCode(200)
  @AllowScopes('client')
  @Answers(Messages.activation.heartbeat, { description: 'expires_at moved to now + the heartbeat interval' })
  @ApiProblems(404, 422)
  heartbeat(@Param('id', uuidParam) id: string): Promise<ActivationView> {
    return this.bus.send(Messages.activation.heartbeat, { id });
  }

  @Delete(':id')
  @HttpCode(200)
  @AllowScopes('client')
  @Answers(Messages.activation.delete)
  @ApiProblems(404)
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.activation.delete, { id });
  }
}
