export * from './registry';
export * from './http';
