/** Transactional outbox: record events and audit entries with a change, publish them to JetStream after commit. */
export * from './outbox-event.entity';
export * from './record-event';
export * from './audit-changes';
export * from './record-audit';
export * from './outbox-messages';
export * from './outbox-relay.service';
export * from './outbox-signal';
export * from './events.module';
