export * from './request-context';
export * from './logger';
export * from './throttled-warning';
