/**
 * A database connection that broke under a statement: the server was restarted or shut down, an
 * operator terminated the backend, a failover cut it, or no connection could be had. The statement
 * (and its transaction) did not take effect, or at worst its outcome is unknown, exactly as with a
 * bus timeout, so the caller gets `503 unavailable` and retries, never a `500`.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // TypeORM wraps the driver's error in a QueryFailedError and keeps it as `driverError`.
  const driver = (error as { driverError?: unknown }).driverError;
  const candidate = (typeof driver === 'object' && driver !== null ? driver : error) as {
    code?: unknown;
    message?: unknown;
  };
  const code = typeof candidate.code === 'string' ? candidate.code : '';
  // SQLSTATE class 08 (connection exception); 57P01-57P03: terminated by an administrator, server
  // crash, server not accepting connections yet.
  if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)) return true;
  // TypeORM releases a transaction's query runner when its connection fails between statements;
  // the next statement or the COMMIT then throws one of these (the transaction is gone with the
  // connection). Misusing a manager after its transaction throws them too, and a test shows that
  // as a 503 where it expects a 2xx.
  const name = (error as { name?: unknown }).name;
  if (name === 'QueryRunnerAlreadyReleasedError' || name === 'QueryRunnerProviderAlreadyReleasedError') {
    return true;
  }
  // node-postgres says these without a code: the socket closed under a query, a client whose
  // connection failed (or was closed) is used again, the pool found no connection in time, or a
  // query had no answer within DATABASE_QUERY_TIMEOUT_MS (PostgreSQL unreachable, or the query
  // too slow; the client is closed then, and a statement queued behind it finds it closed).
  const message = typeof candidate.message === 'string' ? candidate.message : '';
  return /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout)/.test(
    message,
  );
}
