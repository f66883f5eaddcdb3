// The relay's errors: a stable code, the HTTP status it is answered with, and a message.

export const RELAY_ERRORS = {
  validation_failed: 400,
  license_revoked: 403,
  relay_file_expired: 403,
  not_found: 404,
  no_seats: 409,
  payload_too_large: 413,
  clock_rewound: 503,
  internal: 500,
} as const;

export type RelayErrorCode = keyof typeof RELAY_ERRORS;

export interface FieldError {
  field: string;
  message: string;
}

export class RelayError extends Error {
  override readonly name = 'RelayError';
  readonly status: number;

  constructor(
    readonly code: RelayErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.status = RELAY_ERRORS[code];
  }
}
