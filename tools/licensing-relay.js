#!/usr/bin/env node
// The `licensing-relay` command line (apps/relay): `npx licensing-relay --help` from the repository.
// In a checkout it compiles first; with dist/ already built it skips that.
const path = require('node:path');
const { buildIfCheckout, root } = require('./build-if-checkout');

buildIfCheckout();

require('./register-paths');
require(path.join(root, 'dist/apps/relay/src/main.js'));
