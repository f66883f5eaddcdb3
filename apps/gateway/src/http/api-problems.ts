import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { ProblemView } from '@licensing/contracts';
import { ERROR_STATUS, ErrorCode } from '@licensing/shared/errors';
import { problemTitle } from './problem';

/** The security scheme of the OpenAPI document: an API key sent as a Bearer token. */
export const API_KEY_SCHEME = 'apiKey';

/** What each code means when a route gives no more precise reason. */
const WHEN: Record<ErrorCode, string> = {
  validation_failed: 'a field, query or path parameter is invalid; `errors` names each one',
  unauthorized: 'the API key or token is missing, malformed, unknown, expired or revoked',
  forbidden: "the credential's scopes do not allow this operation",
  not_found: 'the resource does not exist, or belongs to another organization',
  conflict: 'the request conflicts with the current state of the resource',
  seat_limit_reached: 'every seat of the license is taken',
  offline_activation: 'an air-gapped seat is released by its signed release file, or by an admin key',
  process_limit_reached: "every process slot of the machine is taken (the policy's max_processes)",
  payload_too_large: 'the body is larger than 1 MiB',
  license_not_active: 'the license is revoked, suspended or expired',
  fingerprint_mismatch: "the fingerprint is not the license's hardware binding",
  key_pair_missing: 'the product has no key pair',
  unknown_entitlement: 'a code is not an entitlement of the organization; `detail` names each one',
  usage_limit_exceeded: "the increment would take `uses` past the license's `max_uses`; nothing changed",
  policy_product_mismatch: '`product_id` is not the product of the policy `policy_id`',
  license_not_floating: 'a relay file is issued for a `floating` license only',
  report_signature_invalid:
    "the relay report is malformed, or its signature does not verify with the relay file's key",
  report_serial_mismatch: "the relay report's `serial` is not the serial of its relay file's license",
  rate_limited: 'over the rate limit of this API key (or license); retry after `Retry-After` seconds',
  internal: 'an unexpected failure',
  unavailable: 'a backing service is down; the request had no effect, or is safe to retry',
};

/** What every authenticated route may answer, whatever it does. */
const EVERY_ROUTE: ErrorCode[] = [
  'validation_failed',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'unavailable',
];

/** A code a route can answer, alone or with the reason it does on that route. */
export type ProblemCase = ErrorCode | [code: ErrorCode, when: string];

/** The body of a problem answer, as an example of the OpenAPI document. */
function problemExample(code: ErrorCode, detail: string): Record<string, unknown> {
  const capitalized = detail.charAt(0).toUpperCase() + detail.slice(1).replace(/`/g, '');
  return {
    type: 'about:blank',
    title: problemTitle(code),
    status: ERROR_STATUS[code],
    code,
    detail: capitalized,
    ...(code === 'validation_failed'
      ? { errors: [{ field: 'name', message: 'name must be a string' }] }
      : {}),
  };
}

/**
 * Documents a route's problem answers (RFC 9457, `application/problem+json`): the codes every
 * authenticated route may answer (400, 401, 403, 429, 503) and those this route adds, each with
 * why it happens here. Codes of one status share a response; each code is one named example, so a
 * reader (and the document's description of the operation) sees exactly which codes can come back.
 */
export function ApiProblems(...cases: ProblemCase[]): MethodDecorator & ClassDecorator {
  const byCode = new Map<ErrorCode, string>(EVERY_ROUTE.map((code) => [code, WHEN[code]]));
  for (const entry of cases) {
    const [code, when] = typeof entry === 'string' ? [entry, WHEN[entry]] : entry;
    byCode.set(code, when);
  }
  const byStatus = new Map<number, [ErrorCode, string][]>();
  for (const [code, when] of byCode) {
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), [code, when]]);
  }
  return applyDecorators(
    ApiBearerAuth(API_KEY_SCHEME),
    ...[...byStatus].map(([status, codes]) => problemResponse(status, codes)),
  );
}

/** One problem response; a second one for the same status (from another decorator) is merged into it. */
export function problemResponse(
  status: number,
  codes: [code: ErrorCode, when: string][],
  exampleName?: (code: ErrorCode) => string,
): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status,
    type: ProblemView,
    description: codes.map(([code, when]) => `\`${code}\`: ${when}`).join('\n\n'),
    examples: Object.fromEntries(
      codes.map(([code, when]) => [
        exampleName?.(code) ?? code,
        { summary: `${code}: ${when.replace(/`/g, '')}`, value: problemExample(code, when) },
      ]),
    ),
  });
}
