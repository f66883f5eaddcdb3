import { Module } from '@nestjs/common';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import { DeliveryWorker, WEBHOOK_RESOLVER } from './delivery.worker';
import { EventFanoutConsumer } from './event-fanout.consumer';

@Module({
  controllers: [DeliveriesController],
  providers: [
    DeliveriesRepository,
    DeliveriesService,
    DeliveryWorker,
    EventFanoutConsumer,
    // The system resolver; a test module may provide its own.
    { provide: WEBHOOK_RESOLVER, useValue: undefined },
  ],
  exports: [DeliveriesRepository, DeliveryWorker, EventFanoutConsumer, WEBHOOK_RESOLVER],
})
export class DeliveriesModule {}
