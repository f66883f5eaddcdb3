// The processes that make up the platform, in start order, with their compiled entry points, and
// the settings `npm start` gives a process beyond its own defaults (the environment still wins).
module.exports = [
  { name: 'product-service', main: 'dist/apps/product-service/src/main.js' },
  { name: 'license-service', main: 'dist/apps/license-service/src/main.js' },
  { name: 'revocation-service', main: 'dist/apps/revocation-service/src/main.js' },
  { name: 'analytics-service', main: 'dist/apps/analytics-service/src/main.js' },
  {
    name: 'webhook-service',
    main: 'dist/apps/webhook-service/src/main.js',
    // Local receivers (http://localhost:…) are what a developer subscribes; never set in production.
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  },
  { name: 'gateway', main: 'dist/apps/gateway/src/main.js' },
];
