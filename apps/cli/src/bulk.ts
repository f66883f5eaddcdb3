import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';

/** The columns a license import reads; `product_id` is the only one required. */
export const IMPORT_COLUMNS = [
  'product_id',
  'license_type',
  'customer_id',
  'customer_email',
  'features',
  'valid_days',
  'max_seats',
  'fingerprint',
] as const;

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
}

/** Reads a CSV of licenses (a header row naming IMPORT_COLUMNS). Throws on unknown columns. */
export async function readImport(file: string): Promise<ImportRow[]> {
  const records = parse(await readFile(file, 'utf8'), {
    columns: true,
    skip_empty_lines: true,
    trim: true,
    bom: true,
  }) as Record<string, string>[];
  const unknown = Object.keys(records[0] ?? {}).filter(
    (column) => !(IMPORT_COLUMNS as readonly string[]).includes(column),
  );
  if (unknown.length > 0) {
    throw new Error(`unknown column(s) ${unknown.join(', ')}; known: ${IMPORT_COLUMNS.join(', ')}`);
  }
  return records.map((record, index) => {
    const line = index + 2;
    const body = bodyOf(record);
    const key = `import-${createHash('sha256')
      .update(`${line}\n${JSON.stringify(body)}`)
      .digest('hex')}`;
    return { line, body, key };
  });
}

function bodyOf(record: Record<string, string>): Record<string, unknown> {
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
    valid_days: number('valid_days'),
    max_seats: number('max_seats'),
    hardware_binding: text('fingerprint') === undefined ? undefined : { fingerprint: text('fingerprint') },
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
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
  'valid_from',
  'valid_until',
  'created_at',
] as const;

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
