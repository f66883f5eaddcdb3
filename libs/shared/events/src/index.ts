/** Transactional outbox: record events with a change, publish them to JetStream after commit. */
export * from './outbox-event.entity';
export * from './record-event';
export * from './outbox-relay.service';
export * from './events.module';
