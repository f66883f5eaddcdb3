/**
 * The migration rules of docs/operations.md ("Upgrading"), checked on this checkout against the
 * previous release (tools/upgrade/previous-release.json), and the checker itself on sample SQL.
 */
import {
  ContractChange,
  MigrationFiles,
  contractChanges,
  migrationViolations,
  upStatements,
} from './support/migration-rules';
import { migrationFiles, previousRelease } from './support/previous-release';

describe('migrations since the previous release', () => {
  it('leave shipped migrations as they were, sort after them, and only expand the schema unless marked', () => {
    expect(migrationViolations(migrationFiles(previousRelease().commit))).toEqual([]);
  });
});

describe('the migration rules checker', () => {
  const RELEASED = 'aaaaaaa';
  const UNRELEASED = 'bbbbbbb';
  const none = new Set<string>();
  const rules = (sql: string, newTables: ReadonlySet<string> = none) =>
    contractChanges(sql, newTables).map(({ rule, subject }): Pick<ContractChange, 'rule' | 'subject'> => ({
      rule,
      subject,
    }));

  /** A migration file as migration-generate.js writes one, with `up` running `statements`. */
  const migration = (
    statements: string[],
    comment = '',
  ) => `import { MigrationInterface, QueryRunner } from 'typeorm';

export class Sample1800000000000 implements MigrationInterface {
  name = 'Sample1800000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    ${comment}
${statements.map((sql) => `    await queryRunner.query(\`${sql}\`);`).join('\n')}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`DROP TABLE "license"."samples"\`);
  }
}
`;
  const SHIPPED = 'apps/license-service/src/migrations/1795375637788-CreateLicensing.ts';
  const shippedSource = Buffer.from(migration(['CREATE TABLE "license"."licenses" ("id" uuid NOT NULL)']));
  const files = (added: Record<string, string>, current: Record<string, Buffer> = {}): MigrationFiles => ({
    previous: new Map([[SHIPPED, shippedSource]]),
    current: new Map([
      [SHIPPED, shippedSource],
      ...Object.entries(current),
      ...Object.entries(added).map(([file, source]): [string, Buffer] => [file, Buffer.from(source)]),
    ]),
    releasedBy: (commit) => commit === RELEASED,
  });
  const ADDED = 'apps/license-service/src/migrations/1800000000000-Sample.ts';

  it('finds a dropped table or schema', () => {
    expect(rules('DROP TABLE "license"."licenses"')).toEqual([
      { rule: 'drop-table', subject: 'license.licenses' },
    ]);
    expect(rules('DROP TABLE IF EXISTS license.a, license.b CASCADE')).toEqual([
      { rule: 'drop-table', subject: 'license.a' },
      { rule: 'drop-table', subject: 'license.b' },
    ]);
    expect(rules('DROP SCHEMA "license" CASCADE')).toEqual([{ rule: 'drop-table', subject: 'license' }]);
  });

  it('finds a dropped column, with or without the COLUMN keyword', () => {
    expect(rules('ALTER TABLE "license"."licenses" DROP COLUMN "notes"')).toEqual([
      { rule: 'drop-column', subject: 'license.licenses.notes' },
    ]);
    expect(rules('ALTER TABLE license.licenses DROP IF EXISTS notes, ADD "memo" text')).toEqual([
      { rule: 'drop-column', subject: 'license.licenses.notes' },
    ]);
  });

  it('finds a renamed table or column', () => {
    expect(rules('ALTER TABLE "license"."licenses" RENAME COLUMN "notes" TO "memo"')).toEqual([
      { rule: 'rename', subject: 'license.licenses.notes' },
    ]);
    expect(rules('ALTER TABLE "license"."licenses" RENAME notes TO memo')).toEqual([
      { rule: 'rename', subject: 'license.licenses.notes' },
    ]);
    expect(rules('ALTER TABLE "license"."licenses" RENAME TO "grants"')).toEqual([
      { rule: 'rename', subject: 'license.licenses' },
    ]);
    expect(rules('ALTER TABLE "license"."licenses" SET SCHEMA "archive"')).toEqual([
      { rule: 'rename', subject: 'license.licenses' },
    ]);
  });

  it("finds a column's type changed", () => {
    expect(rules('ALTER TABLE "license"."licenses" ALTER COLUMN "max_seats" TYPE bigint')).toEqual([
      { rule: 'type-change', subject: 'license.licenses.max_seats' },
    ]);
    expect(
      rules('ALTER TABLE license.licenses ALTER max_seats SET DATA TYPE bigint USING max_seats::bigint'),
    ).toEqual([{ rule: 'type-change', subject: 'license.licenses.max_seats' }]);
  });

  it('finds NOT NULL on an existing table: set on a column, or a column added NOT NULL without a default', () => {
    expect(rules('ALTER TABLE "license"."licenses" ALTER COLUMN "customer_id" SET NOT NULL')).toEqual([
      { rule: 'not-null-on-existing-table', subject: 'license.licenses.customer_id' },
    ]);
    expect(rules('ALTER TABLE "license"."licenses" ADD "tier" character varying(20) NOT NULL')).toEqual([
      { rule: 'not-null-on-existing-table', subject: 'license.licenses.tier' },
    ]);
  });

  it('lets expanding statements through', () => {
    for (const sql of [
      'CREATE TABLE "license"."grants" ("id" uuid NOT NULL, CONSTRAINT "pk" PRIMARY KEY ("id"))',
      'CREATE INDEX "ix_licenses_customer" ON "license"."licenses" ("customer_id")',
      'ALTER TABLE "license"."licenses" ADD "tier" character varying(20)',
      `ALTER TABLE "license"."licenses" ADD "tier" character varying(20) NOT NULL DEFAULT 'basic'`,
      'ALTER TABLE "license"."licenses" ADD COLUMN "n" bigint NOT NULL GENERATED ALWAYS AS IDENTITY',
      'ALTER TABLE "license"."licenses" ADD CONSTRAINT "uq_x" UNIQUE ("serial")',
      'ALTER TABLE "license"."licenses" ADD CONSTRAINT "ck_x" CHECK (max_seats IS NOT NULL)',
      'ALTER TABLE "license"."licenses" DROP CONSTRAINT "uq_x"',
      'ALTER TABLE "license"."licenses" ALTER COLUMN "notes" DROP NOT NULL',
      `ALTER TABLE "license"."licenses" ALTER COLUMN "tier" SET DEFAULT 'basic'`,
      'DROP INDEX "license"."ix_licenses_customer"',
      `UPDATE "license"."licenses" SET tier = 'basic' WHERE tier IS NULL`,
    ]) {
      expect({ sql, changes: rules(sql) }).toEqual({ sql, changes: [] });
    }
  });

  it('lets a table created since the previous release change freely', () => {
    const newTables = new Set(['license.grants']);
    expect(rules('ALTER TABLE "license"."grants" ADD "tier" text NOT NULL', newTables)).toEqual([]);
    expect(rules('ALTER TABLE "license"."grants" DROP COLUMN "tier"', newTables)).toEqual([]);
    expect(rules('DROP TABLE "license"."grants"', newTables)).toEqual([]);
    // Created earlier in the same migration.
    const source = migration([
      'CREATE TABLE "license"."grants" ("id" uuid NOT NULL)',
      'ALTER TABLE "license"."grants" ADD "license_id" uuid NOT NULL',
    ]);
    expect(migrationViolations(files({ [ADDED]: source }))).toEqual([]);
  });

  it("reads the SQL of up() only, each statement whole, past comments' apostrophes", () => {
    const source = migration(
      ['ALTER TABLE "license"."licenses" ADD "memo" text', `UPDATE "license"."licenses" SET memo = 'it''s'`],
      "// the license's memo\n    /* isn't read yet */",
    );
    expect(upStatements(source)).toEqual([
      'ALTER TABLE "license"."licenses" ADD "memo" text',
      `UPDATE "license"."licenses" SET memo = 'it''s'`,
    ]);
  });

  it('accepts a contracting migration only with a marker that names what it removes and a released commit', () => {
    const drop = 'ALTER TABLE "license"."licenses" DROP COLUMN "legacy_key"';
    const checked = (comment: string) =>
      migrationViolations(files({ [ADDED]: migration([drop], comment) })).map((v) => v.rule);
    expect(checked('')).toEqual(['drop-column']);
    expect(checked(`// contract: license.licenses.legacy_key unread since ${RELEASED}`)).toEqual([]);
    expect(checked(`// contract: license.licenses.other_key unread since ${RELEASED}`)).toEqual([
      'drop-column',
    ]);
    // The release named still reads the column: the previous release would break during the rollout.
    expect(checked(`// contract: license.licenses.legacy_key unread since ${UNRELEASED}`)).toEqual([
      'drop-column',
    ]);
  });

  it('refuses a shipped migration edited or removed', () => {
    const edited = Buffer.from(shippedSource.toString().replace('uuid NOT NULL', 'uuid'));
    expect(
      migrationViolations({ ...files({}), current: new Map([[SHIPPED, edited]]) }).map((v) => v.rule),
    ).toEqual(['shipped-migration-edited']);
    expect(migrationViolations({ ...files({}), current: new Map() }).map((v) => v.rule)).toEqual([
      'shipped-migration-removed',
    ]);
  });

  it('refuses a new migration whose timestamp does not sort after the previous release, or that is misnamed', () => {
    const source = migration(['ALTER TABLE "license"."licenses" ADD "memo" text']);
    expect(
      migrationViolations(files({ 'apps/gateway/src/migrations/1795000000000-AddMemo.ts': source })).map(
        (v) => v.rule,
      ),
    ).toEqual(['sorts-before-previous-release']);
    expect(
      migrationViolations(files({ 'apps/gateway/src/migrations/add-memo.ts': source })).map((v) => v.rule),
    ).toEqual(['misnamed']);
    expect(migrationViolations(files({ [ADDED]: source }))).toEqual([]);
  });
});
