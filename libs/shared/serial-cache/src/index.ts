export * from './serial-status.cache';
export * from './serial-cache.module';
