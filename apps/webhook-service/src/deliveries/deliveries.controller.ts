import {
  DeliveryDetailView,
  DeliveryListView,
  DeliveryView,
  IdDto,
  ListDeliveriesMessage,
  Messages,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { DeliveriesService } from './deliveries.service';

@BusController()
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Handles(Messages.webhook.deliveries)
  list(@BusOrg() orgId: string, @BusData() query: ListDeliveriesMessage): Promise<DeliveryListView> {
    return this.deliveries.list(orgId, query);
  }

  @Handles(Messages.webhook.delivery)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<DeliveryDetailView> {
    return this.deliveries.get(orgId, id);
  }

  @Handles(Messages.webhook.redeliver)
  redeliver(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<DeliveryView> {
    return this.deliveries.redeliver(orgId, id);
  }
}
