import { CliError } from './cli-io';

// Commander calls these with an option's text. A bad value throws a CliError, which exits with 2.

/** A comma-separated list. Blank items are dropped, so '' is an empty list. */
export const csv = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function integer(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new CliError(`not an integer: ${value}`, 2);
  return n;
}

/**
 * An integer, or `none` for a limit switched off. Commander turns a parser's null into '', so the
 * word travels as is and `orNull` makes it null in the body.
 */
export function optionalInteger(value: string): number | 'none' {
  return value === 'none' ? value : integer(value);
}

export const orNull = (value: unknown) => (value === 'none' ? null : value);
