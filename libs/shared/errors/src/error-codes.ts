/** Every error code the API can answer with, and the HTTP status it always travels with (docs/api.md). */
export const ERROR_STATUS = {
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  seat_limit_reached: 409,
  offline_activation: 409,
  process_limit_reached: 409,
  payload_too_large: 413,
  license_not_active: 422,
  fingerprint_mismatch: 422,
  key_pair_missing: 422,
  unknown_entitlement: 422,
  usage_limit_exceeded: 422,
  policy_product_mismatch: 422,
  license_not_floating: 422,
  report_signature_invalid: 422,
  report_serial_mismatch: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}
