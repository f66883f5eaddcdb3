#!/usr/bin/env node
// The operator command line: organizations, their API keys and rate limits, straight in the
// gateway's database. `npm run operator -- org create "Acme"` creates an organization and prints
// its first admin API key (shown only this once). `npm run operator -- --help` lists the commands.
// It reads the gateway's settings (DATABASE_URL, ...). The API's own command line is another one:
// `npm run licensing` (apps/cli).
// In a checkout it compiles first; in the production image (dist/ already built) it skips that.
const path = require('node:path');
const { buildIfCheckout, root } = require('./build-if-checkout');

// `npm run cli` is the old name of this command.
if (process.env.npm_lifecycle_event === 'cli') {
  process.stderr.write('`npm run cli` is now `npm run operator`. The old name will be removed.\n');
}

buildIfCheckout();

require('./register-paths');
require(path.join(root, 'dist/apps/gateway/src/cli.js'))
  .runCli(process.argv.slice(2))
  .then((code) => process.exit(code));
