/** Test helpers shared by every project: environment, polling, an HTTP client and an outside JOSE verifier. */
export * from './environment';
export * from './wait-for';
export * from './http-client';
export * from './jose';
export * from './bus';
export * from './event-recorder';
export * from './cleanup';
