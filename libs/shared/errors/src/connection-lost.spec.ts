import { isConnectionLost } from './connection-lost';
import { DomainError, toDomainError } from './domain-error';

/** What TypeORM throws: the driver's error kept as `driverError`. */
const queryFailed = (driverError: object) =>
  Object.assign(new Error('query failed'), { name: 'QueryFailedError', driverError });
const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('a lost database connection', () => {
  it.each([
    [
      'terminated by an administrator (57P01)',
      queryFailed(pgError('57P01', 'terminating connection due to administrator command')),
    ],
    ['the server crashed (57P02)', pgError('57P02')],
    ['the server is starting up (57P03)', pgError('57P03')],
    ['a connection exception (class 08)', queryFailed(pgError('08006'))],
    ['the socket closed under a query', queryFailed(new Error('Connection terminated unexpectedly'))],
    [
      'a broken client used again',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['no connection from the pool in time', new Error('timeout exceeded when trying to connect')],
    ['no answer to a query in time', queryFailed(new Error('Query read timeout'))],
    [
      'a client closed for that, used again',
      queryFailed(new Error('Client was closed and is not queryable')),
    ],
    [
      'a transaction whose connection failed between statements',
      Object.assign(new Error('Query runner already released. Cannot run queries anymore.'), {
        name: 'QueryRunnerAlreadyReleasedError',
      }),
    ],
    [
      'the server refused the connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    ],
  ])('is unavailable (503), never internal: %s', (_, error) => {
    expect(isConnectionLost(error)).toBe(true);
    const known = toDomainError(error);
    expect(known).toBeInstanceOf(DomainError);
    expect(known?.toJSON()).toMatchObject({ code: 'unavailable', status: 503 });
  });

  it.each([
    ['a unique violation', queryFailed(pgError('23505'))],
    ['a syntax error', queryFailed(pgError('42601'))],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error at all', 'Connection terminated'],
  ])('is told apart from other failures, which stay unexpected: %s', (_, error) => {
    expect(isConnectionLost(error)).toBe(false);
    expect(toDomainError(error)).toBeUndefined();
  });
});
