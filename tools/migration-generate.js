#!/usr/bin/env node
// Writes a migration for a service from the difference between its entities and its migrations,
// computed against a scratch database (never the development one):
//   npm run build && node tools/migration-generate.js product-service CreateProducts
const fs = require('node:fs');
const path = require('node:path');
require('./register-paths');

async function main() {
  const [service, name] = process.argv.slice(2);
  if (!service || !/^[A-Z][A-Za-z]+$/.test(name ?? '')) {
    throw new Error('usage: migration-generate.js <service> <VerbNoun>');
  }
  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/licensing_migrations';
  const { ensureDatabase } = require('@licensing/shared/database');
  await ensureDatabase(process.env.DATABASE_URL);
  const mod = require(path.join(__dirname, '..', 'dist', 'apps', service, 'src', 'data-source.js'));
  const dataSource = mod.default;
  await dataSource.initialize();
  try {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${mod.schema}" CASCADE`);
    await dataSource.query(`CREATE SCHEMA "${mod.schema}"`);
    await dataSource.runMigrations();
    const sql = await dataSource.driver.createSchemaBuilder().log();
    if (sql.upQueries.length === 0) {
      process.stdout.write('Entities and migrations agree; nothing to generate.\n');
      return;
    }
    const timestamp = Date.now();
    const quote = (q) =>
      '`' +
      q.query.replace(/`/g, '\\`') +
      '`' +
      (q.parameters?.length ? `, ${JSON.stringify(q.parameters)}` : '');
    const body = `import { MigrationInterface, QueryRunner } from 'typeorm';

export class ${name}${timestamp} implements MigrationInterface {
  name = '${name}${timestamp}';

  async up(queryRunner: QueryRunner): Promise<void> {
${sql.upQueries.map((q) => `    await queryRunner.query(${quote(q)});`).join('\n')}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
${sql.downQueries
  .reverse()
  .map((q) => `    await queryRunner.query(${quote(q)});`)
  .join('\n')}
  }
}
`;
    const file = path.join(__dirname, '..', 'apps', service, 'src', 'migrations', `${timestamp}-${name}.ts`);
    fs.writeFileSync(file, body);
    process.stdout.write(`Wrote ${path.relative(process.cwd(), file)}; add it to migrations/index.ts.\n`);
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${mod.schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
