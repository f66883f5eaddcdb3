import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ANALYTICS_MIGRATIONS, ANALYTICS_SCHEMA } from '@licensing/app/analytics-service';
import { GATEWAY_MIGRATIONS, GATEWAY_SCHEMA } from '@licensing/app/gateway';
import { LICENSE_MIGRATIONS, LICENSE_SCHEMA } from '@licensing/app/license-service';
import { PRODUCT_MIGRATIONS, PRODUCT_SCHEMA } from '@licensing/app/product-service';
import { WEBHOOK_MIGRATIONS, WEBHOOK_SCHEMA } from '@licensing/app/webhook-service';
import { migrate, serviceDataSourceOptions } from '@licensing/shared/database';
import { TEST_ADMIN_DATABASE_URL, TEST_DATABASE_NAME, testDatabaseUrl } from '@licensing/shared/testing';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

/** Every schema of the platform, each with its migrations, as the services migrate them at boot. */
const SCHEMAS = [
  { schema: PRODUCT_SCHEMA, migrations: PRODUCT_MIGRATIONS },
  { schema: LICENSE_SCHEMA, migrations: LICENSE_MIGRATIONS },
  { schema: ANALYTICS_SCHEMA, migrations: ANALYTICS_MIGRATIONS },
  { schema: WEBHOOK_SCHEMA, migrations: WEBHOOK_MIGRATIONS },
  { schema: GATEWAY_SCHEMA, migrations: GATEWAY_MIGRATIONS },
];

/** Template databases are named this and a hash; tools/jest-global-setup.js drops them all. */
const TEMPLATE_PREFIX = 'licensing_template_';

/**
 * The template's name holds a hash of every migration file: two checkouts with other migrations,
 * tested at once on one machine, each get their own.
 */
function templateDatabaseName(): string {
  const hash = createHash('sha256');
  const apps = path.join(__dirname, '..', '..', '..');
  for (const app of readdirSync(apps).sort()) {
    const dir = path.join(apps, app, 'src', 'migrations');
    let files: string[];
    try {
      files = readdirSync(dir).sort();
    } catch {
      continue; // an app without a database
    }
    for (const file of files) hash.update(`${app}/${file}\0`).update(readFileSync(path.join(dir, file)));
  }
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

const exists = async (admin: Client, name: string) =>
  ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;

/**
 * Creates this test file's database as a copy of the run's template, in which every schema is
 * migrated. Migrating from nothing took 2–3 s per file; the copy takes a fraction of a second.
 * The first file of a run builds the template, under a lock, while the others wait for it.
 * The services still run their migrations at boot and find none pending.
 * Does nothing when the file's database exists already.
 */
export async function createTestDatabase(): Promise<void> {
  const admin = new Client({ connectionString: TEST_ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    if (await exists(admin, TEST_DATABASE_NAME)) return;
    const template = templateDatabaseName();
    if (!(await exists(admin, template))) {
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [TEMPLATE_PREFIX]);
      try {
        if (!(await exists(admin, template))) await buildTemplate(admin, template);
      } finally {
        await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [TEMPLATE_PREFIX]);
      }
    }
    await admin.query(`CREATE DATABASE "${TEST_DATABASE_NAME}" TEMPLATE "${template}"`);
  } finally {
    await admin.end();
  }
}

/** Migrates every schema in a database of its own, then gives it the template's name. */
async function buildTemplate(admin: Client, template: string): Promise<void> {
  const building = `${template}_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${building}"`);
  try {
    for (const { schema, migrations } of SCHEMAS) {
      const dataSource = new DataSource(
        serviceDataSourceOptions({
          url: testDatabaseUrl(building),
          schema,
          entities: [],
          migrations,
          poolSize: 1,
        }),
      );
      await dataSource.initialize();
      try {
        await migrate(dataSource, schema);
      } finally {
        await dataSource.destroy();
      }
    }
    // Only now does the template exist under its name: a file that finds it finds it complete.
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
  } catch (error) {
    await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    throw error;
  }
}
