/**
 * Timestamps are stored with millisecond precision, the precision the API returns, so that what a
 * client reads back and the order of a list agree exactly.
 */
export const TIMESTAMP = { type: 'timestamptz', precision: 3 } as const;

/**
 * A CHECK constraint's `column IN (...)` from the list the code validates with, so the database's
 * rule and the application's are one list (values are constants of the code, never input).
 */
export function oneOf(column: string, values: readonly string[]): string {
  return `${column} IN (${values.map((value) => `'${value}'`).join(', ')})`;
}
