// REFERENCE PIPELINES — not part of the product. The shapes the reference gateway routes and the
// reference responder answers, one file each (activation.js holds two: activation and heartbeat).
module.exports = [
  require('./check-revocation'),
  require('./check-revocation-strict'),
  require('./sync'),
  require('./sync-strict'),
  require('./verify'),
  require('./validate'),
  require('./validate-policy'),
  require('./license-create'),
  require('./get'),
  ...require('./activation'),
];
