#!/usr/bin/env node
// Operator commands. `npm run cli -- org create "Acme"` creates an organization and prints its
// first admin API key (shown only this once). Reads the gateway's settings (DATABASE_URL, ...).
// In a checkout it compiles first; in the production image (dist/ already built) it skips that.
const path = require('node:path');
const { buildIfCheckout, root } = require('./build-if-checkout');

buildIfCheckout();

require('./register-paths');
require(path.join(root, 'dist/apps/gateway/src/cli.js'))
  .runCli(process.argv.slice(2))
  .then((code) => process.exit(code));
