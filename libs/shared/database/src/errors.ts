import { QueryFailedError } from 'typeorm';

interface PgError {
  code?: string;
  constraint?: string;
}

function driverError(error: unknown): PgError | undefined {
  if (error instanceof QueryFailedError) return error.driverError as PgError;
  if (typeof error === 'object' && error !== null && 'code' in error) return error as PgError;
  return undefined;
}

/** True when PostgreSQL refused a row for a unique constraint (optionally: that constraint). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg = driverError(error);
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}

export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const pg = driverError(error);
  return pg?.code === '23503' && (constraint === undefined || pg.constraint === constraint);
}

/**
 * True when PostgreSQL refused a statement for the data it carried (SQLSTATE classes 22, data
 * exception, and 23, integrity violation): sending the same data again would fail again.
 */
export function isDataError(error: unknown): boolean {
  const code = driverError(error)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}
