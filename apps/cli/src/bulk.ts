import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';

/** The columns a license import reads; `product_id` is the only one required (or `--product-id`). */
export const IMPORT_COLUMNS = [
  'product_id',
  'license_type',
  'customer_id',
  'customer_email',
  'features',
  'valid_days',
  'valid_until',
  'max_seats',
  'fingerprint',
  'status',
] as const;
/** The columns of an export that an import reads past: the platform makes them anew. */
export const IGNORED_COLUMNS = ['id', 'serial', 'product_code', 'valid_from', 'created_at'] as const;

const DAY_MS = 86_400_000;

export interface ImportRow {
  /** The row's line in the file (the header is line 1). */
  line: number;
  body: Record<string, unknown>;
  /**
   * The Idempotency-Key of the row: its line and content. Importing the same file again, or
   * re-running an import that was interrupted, replays what each row got the first time (for as
   * long as the platform keeps idempotency keys, 24 h by default) instead of creating it again; a
   * corrected row is a new request.
   */
  key: string;
  /** Why the row is not imported: a license an export shows revoked, suspended or expired. */
  skip?: string;
}

/**
 * Reads a CSV of licenses: a header row naming IMPORT_COLUMNS, or an export of `licenses export`
 * (its other columns are read past). Throws on unknown columns. `productId` replaces every row's
 * product, to import an export into another product or organization. `now` dates `valid_until`.
 */
export async function readImport(
  file: string,
  { productId, now = Date.now() }: { productId?: string; now?: number } = {},
): Promise<ImportRow[]> {
  const records = parse(await readFile(file, 'utf8'), {
    columns: true,
    skip_empty_lines: true,
    trim: true,
    bom: true,
  }) as Record<string, string>[];
  const columns = Object.keys(records[0] ?? {});
  const known: readonly string[] = [...IMPORT_COLUMNS, ...IGNORED_COLUMNS];
  const unknown = columns.filter((column) => !known.includes(column));
  if (unknown.length > 0) {
    throw new Error(`unknown column(s) ${unknown.join(', ')}; known: ${IMPORT_COLUMNS.join(', ')}`);
  }
  const dated = columns.includes('valid_until');
  return records.map((record, index) => {
    const line = index + 2;
    const row = productId ? { ...record, product_id: productId } : record;
    const body = bodyOf(row, dated, now);
    // The row as written, not the body: the days left of a `valid_until` change from day to day.
    const key = `import-${createHash('sha256')
      .update(`${line}\n${JSON.stringify(row)}`)
      .digest('hex')}`;
    return { line, body, key, ...skipOf(record, body) };
  });
}

/** A license that is not active in an export is not made again (a new license is always active). */
function skipOf(record: Record<string, string>, body: Record<string, unknown>): { skip?: string } {
  const status = record['status'];
  if (status && status !== 'active') return { skip: `${status} in the export` };
  if (body['valid_days'] === EXPIRED) return { skip: 'its valid_until has passed' };
  return {};
}

/** Marks a row whose `valid_until` has passed; never sent. */
const EXPIRED = -1;

function bodyOf(record: Record<string, string>, dated: boolean, now: number): Record<string, unknown> {
  const text = (column: string) => (record[column] ? record[column] : undefined);
  // A number the API will validate; a non-number is sent as is, so the row fails with the API's reason.
  const number = (column: string) => {
    const value = text(column);
    return value === undefined ? undefined : Number.isNaN(Number(value)) ? value : Number(value);
  };
  const body: Record<string, unknown> = {
    product_id: text('product_id'),
    license_type: text('license_type'),
    customer_id: text('customer_id'),
    customer_email: text('customer_email'),
    features: text('features')
      ?.split(';')
      .map((feature) => feature.trim())
      .filter(Boolean),
    valid_days: number('valid_days') ?? (dated ? daysLeft(text('valid_until'), now) : undefined),
    max_seats: number('max_seats'),
    hardware_binding: text('fingerprint') === undefined ? undefined : { fingerprint: text('fingerprint') },
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

/**
 * `valid_until` of an export as `valid_days`: whole days from the start of today (UTC), rounded
 * up, so the new license ends on that day or the next; the same all day long, so a re-run sends
 * the same body. None (0, no end) when it is empty; EXPIRED when it has passed. A date that does
 * not parse is sent as is, and the API refuses it.
 */
function daysLeft(validUntil: string | undefined, now: number): number | string {
  if (validUntil === undefined) return 0;
  const until = Date.parse(validUntil);
  if (Number.isNaN(until)) return validUntil;
  if (until <= now) return EXPIRED;
  const today = now - (now % DAY_MS);
  return Math.ceil((until - today) / DAY_MS);
}

/** The columns of a CSV export, in order; lists are joined with `;` as an import reads them. */
export const EXPORT_COLUMNS = [
  'id',
  'serial',
  'product_id',
  'product_code',
  'license_type',
  'status',
  'customer_id',
  'customer_email',
  'features',
  'max_seats',
  'fingerprint',
  'valid_from',
  'valid_until',
  'created_at',
] as const;

/** A license as a row of EXPORT_COLUMNS. */
export function exportRow(license: Record<string, unknown>): unknown[] {
  const binding = license['hardware_binding'] as { fingerprint?: string } | null | undefined;
  return EXPORT_COLUMNS.map((column) => (column === 'fingerprint' ? binding?.fingerprint : license[column]));
}

export function csvLine(values: unknown[]): string {
  return `${values
    .map((value) => {
      const text =
        value === null || value === undefined
          ? ''
          : Array.isArray(value)
            ? value.join(';')
            : typeof value === 'object'
              ? JSON.stringify(value)
              : String(value);
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',')}\n`;
}
