import { Module } from '@nestjs/common';
import { OutboxRelay } from './outbox-relay.service';

/** The outbox relay of a service that records events; needs the service's DataSource and BusClient. */
@Module({
  providers: [OutboxRelay],
  exports: [OutboxRelay],
})
export class EventsModule {}
