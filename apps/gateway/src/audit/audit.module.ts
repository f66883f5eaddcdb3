import { Module } from '@nestjs/common';
import { AuditEntriesConsumer } from './audit-entries.consumer';
import { AuditEventsService } from './audit-events.service';

/** The audit log of every change made with an API key: stored by the gateway, read by admins. */
@Module({
  providers: [AuditEventsService, AuditEntriesConsumer],
  exports: [AuditEventsService],
})
export class AuditModule {}
