import {
  CreateWebhookDto,
  IdDto,
  Messages,
  MessageView,
  PageQueryDto,
  UpdateWebhookMessage,
  WebhookCreatedView,
  WebhookListView,
  WebhookSecretView,
  WebhookTestView,
  WebhookView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { EndpointsService } from './endpoints.service';

@BusController()
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Handles(Messages.webhook.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateWebhookDto): Promise<WebhookCreatedView> {
    return this.endpoints.create(orgId, dto);
  }

  @Handles(Messages.webhook.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<WebhookListView> {
    return this.endpoints.list(orgId, query);
  }

  @Handles(Messages.webhook.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<WebhookView> {
    return this.endpoints.get(orgId, id);
  }

  @Handles(Messages.webhook.update)
  update(@BusOrg() orgId: string, @BusData() { id, changes }: UpdateWebhookMessage): Promise<WebhookView> {
    return this.endpoints.update(orgId, id, changes);
  }

  @Handles(Messages.webhook.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.endpoints.delete(orgId, id);
  }

  @Handles(Messages.webhook.rotateSecret)
  rotateSecret(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<WebhookSecretView> {
    return this.endpoints.rotateSecret(orgId, id);
  }

  @Handles(Messages.webhook.test)
  test(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<WebhookTestView> {
    return this.endpoints.test(orgId, id);
  }
}
