import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { ProblemView } from '@licensing/contracts';

const DESCRIPTIONS: Record<number, string> = {
  400: 'validation_failed: a field, query or path parameter is invalid',
  401: 'unauthorized: missing, unknown or revoked API key',
  403: "forbidden: the key's scopes do not allow this",
  404: 'not_found: absent, or owned by another organization',
  409: 'conflict',
  413: 'payload_too_large: body over 1 MiB',
  422: 'key_pair_missing: the product has no key pair',
  429: 'rate_limited: over the rate limit of this API key (or license); see Retry-After',
  503: 'unavailable: a backing service is down; safe to retry',
};

/** Documents the problem+json answers of a route (401, 429 and 503 apply to every authenticated route). */
export function ApiProblems(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ...[...new Set([400, 401, 403, 429, 503, ...statuses])].map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status], type: ProblemView }),
    ),
  );
}
