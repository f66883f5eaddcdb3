import { HttpException } from '@nestjs/common';
import { DomainError, ErrorCode, FieldError, toDomainError } from '@licensing/shared/errors';

export interface Problem {
  type: 'about:blank';
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
}

export function problemTitle(code: ErrorCode): string {
  switch (code) {
    case 'validation_failed':
      return 'Bad Request';
    case 'unauthorized':
      return 'Unauthorized';
    case 'forbidden':
      return 'Forbidden';
    case 'not_found':
      return 'Not Found';
    case 'conflict':
    case 'seat_limit_reached':
    case 'offline_activation':
    case 'process_limit_reached':
      return 'Conflict';
    case 'payload_too_large':
      return 'Payload Too Large';
    case 'license_not_active':
    case 'fingerprint_mismatch':
    case 'key_pair_missing':
    case 'unknown_entitlement':
    case 'usage_limit_exceeded':
    case 'policy_product_mismatch':
    case 'license_not_floating':
    case 'report_signature_invalid':
    case 'report_serial_mismatch':
      return 'Unprocessable Content';
    case 'rate_limited':
      return 'Too Many Requests';
    case 'internal':
      return 'Internal Server Error';
    case 'unavailable':
      return 'Service Unavailable';
    default:
      return assertUnreachable(code);
  }
}

function assertUnreachable(value: never): never {
  throw new Error(`Unhandled error code ${String(value)}`);
}

/** Errors raised by Nest or Fastify themselves (unknown route, body too large, bad JSON) in our vocabulary. */
function fromFrameworkError(error: unknown): DomainError | undefined {
  const status =
    error instanceof HttpException
      ? error.getStatus()
      : typeof (error as { statusCode?: unknown })?.statusCode === 'number'
        ? (error as { statusCode: number }).statusCode
        : undefined;
  const code = (error as { code?: unknown })?.code;
  if (status === 413 || code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new DomainError('payload_too_large', 'The request body is larger than 1 MiB');
  }
  if (status === 404) return new DomainError('not_found', 'No such route');
  if (status === 415 || code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new DomainError(
      'validation_failed',
      'The request body must be JSON (Content-Type: application/json)',
    );
  }
  if (status === 405) return new DomainError('not_found', 'No such route for this method');
  if (status === 503) {
    const detail = error instanceof HttpException ? error.message : 'A backing service is unavailable';
    return new DomainError('unavailable', detail);
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new DomainError(
      'validation_failed',
      code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? 'The request body is empty'
        : 'The request is malformed (invalid JSON?)',
    );
  }
  return undefined;
}

/** Every error response of the API, as RFC 9457 problem details. Unknown failures become a bare 500. */
export function toProblem(error: unknown): {
  problem: Problem;
  unexpected: boolean;
  retryAfterSeconds?: number;
} {
  const known = toDomainError(error) ?? fromFrameworkError(error);
  const domain = known ?? new DomainError('internal', 'An unexpected error occurred');
  return {
    problem: {
      type: 'about:blank',
      title: problemTitle(domain.code),
      status: domain.status,
      code: domain.code,
      detail: domain.message,
      ...(domain.errors ? { errors: domain.errors } : {}),
    },
    unexpected: known === undefined,
    retryAfterSeconds: domain.retryAfterSeconds,
  };
}
