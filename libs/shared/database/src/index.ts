export * from './data-source';
export * from './errors';
export * from './columns';
export * from './pagination';
export * from './schema-drift';
export * from './database.module';
export * from './exclusive-job';
export * from './prepared-statement';
