// The processes that make up the platform, in start order, with their compiled entry points, and
// the settings `npm start` gives a process beyond its own defaults (the environment still wins).
// `healthOffset`: `npm start` serves a service's health port at the gateway's PORT plus this (3101
// to 3105 beside the default 3000), so that one PORT moves a whole stack.
module.exports = [
  { name: 'product-service', main: 'dist/apps/product-service/src/main.js', healthOffset: 101 },
  { name: 'license-service', main: 'dist/apps/license-service/src/main.js', healthOffset: 102 },
  { name: 'revocation-service', main: 'dist/apps/revocation-service/src/main.js', healthOffset: 103 },
  { name: 'analytics-service', main: 'dist/apps/analytics-service/src/main.js', healthOffset: 104 },
  {
    name: 'webhook-service',
    main: 'dist/apps/webhook-service/src/main.js',
    healthOffset: 105,
    // Local receivers (http://localhost:…) are what a developer subscribes; never set in production.
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  },
  { name: 'gateway', main: 'dist/apps/gateway/src/main.js' },
];
