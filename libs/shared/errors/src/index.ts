export * from './error-codes';
export * from './domain-error';
export * from './validation';
export * from './connection-lost';
export * from './compiled-validation';
