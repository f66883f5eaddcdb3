/**
 * Test helpers shared by every project: the test infrastructure and environment, polling, an HTTP
 * client, factories, license-file and SQL helpers, and an outside JOSE verifier.
 */
export * from './environment';
export * from './wait-for';
export * from './http-client';
export * from './jose';
export * from './bus';
export * from './event-recorder';
export * from './cleanup';
export * from './factories';
export * from './license-blobs';
export * from './sql';
export * from './processes';
export * from './tcp-proxy';
