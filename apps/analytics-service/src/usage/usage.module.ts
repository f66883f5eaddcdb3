import { Module } from '@nestjs/common';
import { MeteredUsesRepository } from './metered-uses.repository';
import { UsageEventConsumer } from './usage-event.consumer';

/** Metered usage: the accepted increments of licenses, counted from their events. */
@Module({
  providers: [UsageEventConsumer, MeteredUsesRepository],
  exports: [UsageEventConsumer, MeteredUsesRepository],
})
export class UsageModule {}
