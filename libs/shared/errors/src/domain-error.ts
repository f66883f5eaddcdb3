import { isConnectionLost } from './connection-lost';
import { ERROR_STATUS, ErrorCode, isErrorCode } from './error-codes';

export interface FieldError {
  field: string;
  message: string;
}

/** The shape an error has on the bus: plain JSON, enough for the gateway to rebuild the problem. */
export interface SerializedError {
  code: ErrorCode;
  status: number;
  message: string;
  errors?: FieldError[];
  /** A `429`'s wait, in whole seconds: the gateway's `Retry-After`. */
  retry_after?: number;
}

/**
 * A failure the caller can act on. Services throw it; it crosses NATS as a SerializedError and the
 * gateway answers it with the same status and code.
 */
export class DomainError extends Error {
  readonly status: number;
  /**
   * How long to wait before trying again, in whole seconds (the gateway's `Retry-After`): for
   * `rate_limited`, and for a conflict that passes (an idempotent request still in progress).
   */
  retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ERROR_STATUS[code];
  }

  toJSON(): SerializedError {
    return {
      code: this.code,
      status: this.status,
      message: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.retryAfterSeconds !== undefined ? { retry_after: this.retryAfterSeconds } : {}),
    };
  }

  /** A `429` that says when to come back. */
  static rateLimited(message: string, retryAfterSeconds: number): DomainError {
    const error = new DomainError('rate_limited', message);
    error.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return error;
  }

  static notFound(resource: string, id?: string): DomainError {
    return new DomainError(
      'not_found',
      id ? `${resource} ${id} does not exist` : `${resource} does not exist`,
    );
  }

  static conflict(message: string): DomainError {
    return new DomainError('conflict', message);
  }

  static validation(errors: FieldError[], message = 'The request is invalid'): DomainError {
    return new DomainError('validation_failed', message, errors);
  }
}

export function isSerializedError(value: unknown): value is SerializedError {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return isErrorCode(candidate.code) && typeof candidate.message === 'string';
}

/**
 * The domain error a failure stands for, or undefined for one nobody expected (a `500`). A lost
 * database connection is `unavailable`: retrying is the answer, as for a service that is down.
 */
export function toDomainError(value: unknown): DomainError | undefined {
  if (value instanceof DomainError) return value;
  if (isSerializedError(value)) {
    const error = new DomainError(value.code, value.message, value.errors);
    if (typeof value.retry_after === 'number') error.retryAfterSeconds = value.retry_after;
    return error;
  }
  if (isConnectionLost(value)) {
    return new DomainError('unavailable', 'The database connection was lost; retry the request');
  }
  return undefined;
}
