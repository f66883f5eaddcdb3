import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateWebhookDto,
  DeliveryDetailView,
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
import { Operation } from '../http/operation';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';

/** Webhook endpoints and their delivery log (admin only), answered by the webhook service. */
@ApiTags('webhooks')
@Controller(routes('webhooks'))
export class WebhooksController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Operation({
    id: 'createWebhook',
    summary: 'Subscribe an endpoint to events',
    description:
      "Every event of the types in `events` (or `*`) is `POST`ed to `url`, signed with the endpoint's " +
      'secret (`Licensing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`), and ' +
      'retried with backoff for about a day until it answers `2xx`. The `secret` (`whsec_…`) is in ' +
      'this answer only. `url` must be `https` on a public address unless the platform allows private ' +
      'networks (the development default).',
    example: {
      url: 'https://billing.example.com/hooks/licensing',
      events: ['license.created', 'license.revoked'],
      description: 'Billing system',
    },
  })
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
  @Operation({
    id: 'listWebhooks',
    summary: 'List webhook endpoints',
    description: "The organization's endpoints, newest first, a page at a time; never a secret.",
  })
  @Answers(Messages.webhook.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<WebhookListView> {
    return this.bus.send(Messages.webhook.list, query);
  }

  @Get(':id')
  @Operation({
    id: 'getWebhook',
    summary: 'Get a webhook endpoint',
    description: 'One endpoint, without its secret.',
  })
  @Answers(Messages.webhook.get)
  @ApiProblems(['not_found', 'the webhook does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<WebhookView> {
    return this.bus.send(Messages.webhook.get, { id });
  }

  @Put(':id')
  @Operation({
    id: 'updateWebhook',
    summary: 'Update a webhook endpoint',
    description:
      'Changes `url`, `events`, `description` or `enabled`; the others keep their value. ' +
      '`enabled: true` turns a disabled endpoint back on.',
    example: { events: ['*'], enabled: true },
  })
  @Answers(Messages.webhook.update)
  @ApiProblems(['not_found', 'the webhook does not exist in the organization'])
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateWebhookDto): Promise<WebhookView> {
    return this.bus.send(Messages.webhook.update, { id, changes });
  }

  @Delete(':id')
  @Operation({
    id: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: 'Deletes the endpoint and its delivery log; nothing more is delivered to it.',
  })
  @HttpCode(200)
  @Answers(Messages.webhook.delete)
  @ApiProblems(['not_found', 'the webhook does not exist in the organization'])
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.webhook.delete, { id });
  }

  @Post(':id/rotate-secret')
  @Operation({
    id: 'rotateWebhookSecret',
    summary: "Rotate a webhook endpoint's secret",
    description:
      'A new signing secret, shown only in this answer. For 24 hours every delivery carries two ' +
      '`v1=` signatures, one per secret, so the receiver can switch without missing one.',
  })
  @HttpCode(200)
  @Answers(Messages.webhook.rotateSecret, {
    description: 'The new secret, shown once; the previous one also signs deliveries for 24 hours',
  })
  @ApiProblems(['not_found', 'the webhook does not exist in the organization'])
  rotateSecret(@Param('id', uuidParam) id: string): Promise<WebhookSecretView> {
    return this.bus.send(Messages.webhook.rotateSecret, { id });
  }

  @Post(':id/test')
  @Operation({
    id: 'testWebhook',
    summary: 'Send a test event',
    description: 'Delivers a `webhook.test` event to the endpoint at once, like any other delivery.',
  })
  @HttpCode(202)
  @Answers(Messages.webhook.test, { status: 202, description: 'A webhook.test event is on its way' })
  @ApiProblems(
    ['not_found', 'the webhook does not exist in the organization'],
    ['conflict', 'the endpoint is disabled'],
  )
  test(@Param('id', uuidParam) id: string): Promise<WebhookTestView> {
    return this.bus.send(Messages.webhook.test, { id });
  }

  @Get(':id/deliveries')
  @Operation({
    id: 'listWebhookDeliveries',
    summary: "List a webhook endpoint's deliveries",
    description:
      'The delivery log of the endpoint, newest first, a page at a time, optionally by `status` ' +
      '(`pending`, `delivered`, `failed`): attempts, the last status code, error and duration.',
  })
  @Answers(Messages.webhook.deliveries)
  @ApiProblems(['not_found', 'the webhook does not exist in the organization'])
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

  @Get(':id')
  @Operation({
    id: 'getWebhookDelivery',
    summary: 'Get a delivery and its payload',
    description:
      'One delivery: its status, attempts and last answer, and `payload`, the body every attempt ' +
      'sends (`{id, type, org_id, occurred_at, data}`).',
  })
  @Answers(Messages.webhook.delivery)
  @ApiProblems(['not_found', 'the delivery does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<DeliveryDetailView> {
    return this.bus.send(Messages.webhook.delivery, { id });
  }

  @Post(':id/redeliver')
  @Operation({
    id: 'redeliverWebhookDelivery',
    summary: 'Deliver an event again',
    description: 'Attempts the delivery again at once, with a fresh budget of attempts.',
  })
  @HttpCode(202)
  @Answers(Messages.webhook.redeliver, {
    status: 202,
    description: 'Attempted again at once, with a fresh budget of attempts',
  })
  @ApiProblems(
    ['not_found', 'the delivery does not exist in the organization'],
    ['conflict', "the delivery's endpoint is disabled"],
  )
  redeliver(@Param('id', uuidParam) id: string): Promise<DeliveryView> {
    return this.bus.send(Messages.webhook.redeliver, { id });
  }
}
