/**
 * The rules migrations follow so that the previous release keeps running on the schema a new one
 * leaves during a rolling upgrade (docs/operations.md, "Upgrading"), as far as a machine can see
 * them: shipped migrations never change, new ones sort after them, and a new migration only expands
 * the schema unless a `// contract:` comment says what it removes and since which release nothing
 * reads it.
 */

/** A migration file: `apps/<service>/src/migrations/<13-digit timestamp>-<VerbNoun>.ts`. */
export const MIGRATION_FILE = /^apps\/[^/]+\/src\/migrations\/(\d{13})-([A-Za-z]+)\.ts$/;

interface Violation {
  /** The migration file, relative to the repository's root. */
  file: string;
  rule:
    | 'shipped-migration-removed'
    | 'shipped-migration-edited'
    | 'misnamed'
    | 'sorts-before-previous-release'
    | 'drop-table'
    | 'drop-column'
    | 'rename'
    | 'type-change'
    | 'not-null-on-existing-table';
  detail: string;
}

/** A contracting change found in one SQL statement: what it removes or changes, and how. */
export interface ContractChange {
  rule: Extract<
    Violation['rule'],
    'drop-table' | 'drop-column' | 'rename' | 'type-change' | 'not-null-on-existing-table'
  >;
  /** The table (`schema.table`) or column (`schema.table.column`) it touches. */
  subject: string;
  statement: string;
}

/**
 * `// contract: <what is removed> unread since <commit>`: the migration contracts on purpose, and
 * the release `<commit>` is the first that no longer reads what it removes.
 */
interface ContractMarker {
  what: string;
  since: string;
}

const IDENTIFIER = String.raw`(?:"[^"]+"|[A-Za-z_][\w$]*)`;
const NAME = String.raw`${IDENTIFIER}(?:\s*\.\s*${IDENTIFIER})*`;

/**
 * The actions of an ALTER TABLE, in order (the first that matches decides): those that contract,
 * with the column they touch as their first group (none: the table itself), and those that look
 * alike but do not (`rule` undefined). A column added NOT NULL needs a default (or to be generated)
 * for the previous release's inserts, which do not name it.
 */
const ALTER_ACTIONS: Array<{ pattern: RegExp; rule?: ContractChange['rule'] }> = [
  { pattern: /^(?:RENAME|DROP)\s+CONSTRAINT\s/i },
  { pattern: /^(?:RENAME\s+TO|SET\s+SCHEMA)\s/i, rule: 'rename' },
  { pattern: new RegExp(String.raw`^RENAME\s+(?:COLUMN\s+)?(${IDENTIFIER})\s+TO\s`, 'i'), rule: 'rename' },
  {
    pattern: new RegExp(String.raw`^DROP\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?(${IDENTIFIER})`, 'i'),
    rule: 'drop-column',
  },
  {
    pattern: new RegExp(String.raw`^ALTER\s+(?:COLUMN\s+)?(${IDENTIFIER})\s+(?:SET\s+DATA\s+)?TYPE\s`, 'i'),
    rule: 'type-change',
  },
  {
    pattern: new RegExp(String.raw`^ALTER\s+(?:COLUMN\s+)?(${IDENTIFIER})\s+SET\s+NOT\s+NULL\b`, 'i'),
    rule: 'not-null-on-existing-table',
  },
  {
    pattern: new RegExp(
      String.raw`^ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(?!(?:CONSTRAINT|PRIMARY|UNIQUE|CHECK|FOREIGN|EXCLUDE)\b)` +
        String.raw`(${IDENTIFIER})\s(?=.*\bNOT\s+NULL\b)(?!.*\b(?:DEFAULT|GENERATED)\b)`,
      'i',
    ),
    rule: 'not-null-on-existing-table',
  },
];

/** `"license"."activations"` → `license.activations`. */
function nameOf(raw: string): string {
  return (raw.match(new RegExp(IDENTIFIER, 'g')) ?? [])
    .map((part) => part.replace(/"/g, '').toLowerCase())
    .join('.');
}

/** Splits on commas outside parentheses and quotes: the actions of one ALTER TABLE. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}

/** Tables a statement creates (`schema.table`), to tell new tables from existing ones. */
function createdTables(sql: string): string[] {
  const match = new RegExp(
    String.raw`^\s*CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(${NAME})`,
    'i',
  ).exec(sql);
  return match ? [nameOf(match[1]!)] : [];
}

/**
 * What a statement removes or changes in a way the previous release may not survive: a dropped or
 * renamed table or column, a column's new type, NOT NULL on an existing table's column (set, or a
 * column added NOT NULL without a default). `newTables` are the tables created since the previous
 * release: nothing of an older release reads them.
 */
export function contractChanges(sql: string, newTables: ReadonlySet<string>): ContractChange[] {
  const statement = sql.replace(/\s+/g, ' ').trim();
  const changes: ContractChange[] = [];
  const add = (rule: ContractChange['rule'], subject: string) => changes.push({ rule, subject, statement });

  const drop = new RegExp(
    String.raw`^DROP\s+(TABLE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?(${NAME}(?:\s*,\s*${NAME})*)`,
    'i',
  ).exec(statement);
  if (drop) {
    for (const name of splitTopLevel(drop[2]!).map(nameOf)) if (!newTables.has(name)) add('drop-table', name);
    return changes;
  }
  const alter = new RegExp(
    String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(${NAME})\s+(.*)$`,
    'i',
  ).exec(statement);
  if (!alter) return changes;
  const table = nameOf(alter[1]!);
  if (newTables.has(table)) return changes;
  for (const action of splitTopLevel(alter[2]!)) {
    const found = ALTER_ACTIONS.map(({ pattern, rule }) => ({ match: pattern.exec(action), rule })).find(
      ({ match }) => match !== null,
    );
    if (found?.rule) add(found.rule, found.match![1] ? `${table}.${nameOf(found.match![1])}` : table);
  }
  return changes;
}

/**
 * The SQL a migration's `up()` runs: the string literals from `up(` to `down(` that start like
 * SQL. Migrations pass each statement to `queryRunner.query` as one literal (migration-generate.js
 * writes them so).
 */
export function upStatements(source: string): string[] {
  const start = source.search(/\basync\s+up\s*\(/);
  if (start < 0) return [];
  const end = source.slice(start).search(/\basync\s+down\s*\(/);
  const body = source.slice(start, end < 0 ? undefined : start + end);
  const literals: string[] = [];
  for (let i = 0; i < body.length; i += 1) {
    const char = body[i]!;
    if (char === '/' && (body[i + 1] === '/' || body[i + 1] === '*')) {
      // A comment: its apostrophes start no string.
      const close = body[i + 1] === '/' ? '\n' : '*/';
      const at = body.indexOf(close, i + 2);
      if (at < 0) break;
      i = at + close.length - 1;
    } else if (char === '`' || char === "'" || char === '"') {
      let text = '';
      let j = i + 1;
      for (; j < body.length && body[j] !== char; j += 1) {
        if (body[j] === '\\') j += 1;
        text += body[j];
      }
      literals.push(text);
      i = j;
    }
  }
  return literals.filter((text) =>
    /^\s*(ALTER|DROP|CREATE|INSERT|UPDATE|DELETE|COMMENT|TRUNCATE)\b/i.test(text),
  );
}

function contractMarkers(source: string): ContractMarker[] {
  return [...source.matchAll(/\/\/\s*contract:\s*(.+?)\s+unread since\s+([0-9a-f]{7,40})\b/gi)].map(
    (match) => ({
      what: match[1]!,
      since: match[2]!,
    }),
  );
}

/** Whether a marker covers a change: it names the table or column, and its release is at or before the previous one. */
function covers(
  marker: ContractMarker,
  change: ContractChange,
  releasedBy: (commit: string) => boolean,
): boolean {
  const name = change.subject.split('.').pop()!.replace(/[$]/g, '\\$&');
  return (
    new RegExp(String.raw`(^|[^\w$])${name}([^\w$]|$)`, 'i').test(marker.what) && releasedBy(marker.since)
  );
}

export interface MigrationFiles {
  /** The previous release's migration files, by path, with their content. */
  previous: ReadonlyMap<string, Buffer>;
  /** This checkout's files in the migrations folders, by path, with their content. */
  current: ReadonlyMap<string, Buffer>;
  /** Whether a commit is the previous release or one of its ancestors. */
  releasedBy(commit: string): boolean;
}

/** Every rule broken by this checkout's migrations, compared with the previous release's. */
export function migrationViolations({ previous, current, releasedBy }: MigrationFiles): Violation[] {
  const violations: Violation[] = [];
  for (const [file, content] of previous) {
    const now = current.get(file);
    if (now === undefined) {
      violations.push({
        file,
        rule: 'shipped-migration-removed',
        detail: 'a migration of the previous release is gone',
      });
    } else if (!now.equals(content)) {
      violations.push({
        file,
        rule: 'shipped-migration-edited',
        detail: 'it differs from the previous release',
      });
    }
  }
  const latestShipped = Math.max(
    0,
    ...[...previous.keys()].map((file) => Number(MIGRATION_FILE.exec(file)?.[1] ?? 0)),
  );
  const added = [...current.keys()]
    .filter((file) => !previous.has(file) && !/\/index\.ts$|spec\.ts$/.test(file))
    .sort((a, b) => (a.split('/').pop()! < b.split('/').pop()! ? -1 : 1));
  const newTables = new Set<string>();
  for (const file of added) {
    const name = MIGRATION_FILE.exec(file);
    if (!name) {
      violations.push({
        file,
        rule: 'misnamed',
        detail: 'a migration is named <13-digit timestamp>-<VerbNoun>.ts',
      });
      continue;
    }
    if (Number(name[1]) <= latestShipped) {
      violations.push({
        file,
        rule: 'sorts-before-previous-release',
        detail: `its timestamp is not after ${latestShipped}, the previous release's latest`,
      });
    }
    const source = current.get(file)!.toString('utf8');
    const markers = contractMarkers(source);
    for (const statement of upStatements(source)) {
      for (const table of createdTables(statement)) newTables.add(table);
      for (const change of contractChanges(statement, newTables)) {
        if (markers.some((marker) => covers(marker, change, releasedBy))) continue;
        violations.push({ file, rule: change.rule, detail: `${change.subject}: ${change.statement}` });
      }
    }
  }
  return violations;
}
