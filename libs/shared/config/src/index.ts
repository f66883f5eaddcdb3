export * from './env';
export * from './common';
export * from './redis';
