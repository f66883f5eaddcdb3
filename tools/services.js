// The processes that make up the platform, in start order, with their compiled entry points.
module.exports = [
  { name: 'product-service', main: 'dist/apps/product-service/src/main.js' },
  { name: 'license-service', main: 'dist/apps/license-service/src/main.js' },
  { name: 'revocation-service', main: 'dist/apps/revocation-service/src/main.js' },
  { name: 'analytics-service', main: 'dist/apps/analytics-service/src/main.js' },
  { name: 'gateway', main: 'dist/apps/gateway/src/main.js' },
];
