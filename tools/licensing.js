#!/usr/bin/env node
// The `licensing` command line (apps/cli): `npx licensing --help` from the repository.
// In a checkout it compiles first; with dist/ already built it skips that.
const path = require('node:path');
const { buildIfCheckout, root } = require('./build-if-checkout');

buildIfCheckout();

require('./register-paths');
require(path.join(root, 'dist/apps/cli/src/index.js'))
  .runLicensingCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    interactive: Boolean(process.stderr.isTTY),
  })
  .then((code) => {
    process.exitCode = code;
  });
