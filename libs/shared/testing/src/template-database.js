// The name of the test run's template database: every service's schema, migrated once.
// Test files copy it (CREATE DATABASE … TEMPLATE) instead of running every migration again.
// The name holds a hash of the migration files, so a changed migration gets a new template.
// Plain JavaScript: tools/jest-global-setup.js reads it too, to drop the templates of old migrations.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..', '..', '..');

/** Databases whose name starts with this are templates; the rest of the name is the hash. */
const TEMPLATE_PREFIX = 'licensing_template_';

/** @returns {string} */
function templateDatabaseName() {
  const hash = createHash('sha256');
  const apps = path.join(root, 'apps');
  for (const app of fs.readdirSync(apps).sort()) {
    const dir = path.join(apps, app, 'src', 'migrations');
    if (!fs.existsSync(dir)) continue;
    for (const file of fs.readdirSync(dir).sort()) {
      hash.update(`${app}/${file}\0`);
      hash.update(fs.readFileSync(path.join(dir, file)));
    }
  }
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

module.exports = { TEMPLATE_PREFIX, templateDatabaseName };
