export * from './subjects';
export * from './envelope';
export * from './nats-server';
export * from './bus-handlers';
export * from './bus-client';
export * from './bus.module';
export * from './bus-service';
export * from './jetstream';
