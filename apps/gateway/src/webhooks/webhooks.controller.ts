import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateWebhookDto,
  DeliveryListView,
  DeliveryView,
  ListDeliveriesQueryDto,
  MessageView,
  Messages,
  PageQueryDto,
  UpdateWebhookDto,
  WebhookCreatedView,
  WebhookListView,
  WebhookSecretView,
  WebhookTestView,
  WebhookView,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';

/** Webhook endpoints and their delivery log (admin only), answered by the webhook service. */
@ApiTags('webhooks')
@Controller(routes('webhooks'))
export class WebhooksController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent({ secretFields: ['secret'] })
  @Answers(Messages.webhook.create, {
    status: 201,
    description: 'The signing secret is shown only in this answer',
  })
  @ApiProblems()
  create(@Body() dto: CreateWebhookDto): Promise<WebhookCreatedView> {
    return this.bus.send(Messages.webhook.create, dto);
  }

  @Get()
  @Answers(Messages.webhook.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<WebhookListView> {
    return this.bus.send(Messages.webhook.list, query);
  }

  @Get(':id')
  @Answers(Messages.webhook.get)
  @ApiProblems(404)
  get(@Param('id', uuidParam) id: string): Promise<WebhookView> {
    return this.bus.send(Messages.webhook.get, { id });
  }

  @Put(':id')
  @Answers(Messages.webhook.update)
  @ApiProblems(404)
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateWebhookDto): Promise<WebhookView> {
    return this.bus.send(Messages.webhook.update, { id, changes });
  }

  @Delete(':id')
  @HttpCode(200)
  @Answers(Messages.webhook.delete)
  @ApiProblems(404)
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.webhook.delete, { id });
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Answers(Messages.webhook.rotateSecret, {
    description: 'The new secret, shown once; the previous one also signs deliveries for 24 hours',
  })
  @ApiProblems(404)
  rotateSecret(@Param('id', uuidParam) id: string): Promise<WebhookSecretView> {
    return this.bus.send(Messages.webhook.rotateSecret, { id });
  }

  @Post(':id/test')
  @HttpCode(202)
  @Answers(Messages.webhook.test, { status: 202, description: 'A webhook.test event is on its way' })
  @ApiProblems(404, 409)
  test(@Param('id', uuidParam) id: string): Promise<WebhookTestView> {
    return this.bus.send(Messages.webhook.test, { id });
  }

  @Get(':id/deliveries')
  @Answers(Messages.webhook.deliveries)
  @ApiProblems(404)
  deliveries(
    @Param('id', uuidParam) id: string,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<DeliveryListView> {
    return this.bus.send(Messages.webhook.deliveries, { ...query, id });
  }
}

@ApiTags('webhooks')
@Controller(routes('webhook-deliveries'))
export class WebhookDeliveriesController {
  constructor(private readonly bus: BusClient) {}

  @Post(':id/redeliver')
  @HttpCode(202)
  @Answers(Messages.webhook.redeliver, {
    status: 202,
    description: 'Attempted again at once, with a fresh budget of attempts',
  })
  @ApiProblems(404, 409)
  redeliver(@Param('id', uuidParam) id: string): Promise<DeliveryView> {
    return this.bus.send(Messages.webhook.redeliver, { id });
  }
}
