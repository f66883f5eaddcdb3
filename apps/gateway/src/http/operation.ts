import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiOperation } from '@nestjs/swagger';

/** The operation extension holding a request body example, until openapi.ts moves it into place. */
export const REQUEST_EXAMPLE_EXTENSION = 'x-request-example';

export interface OperationDoc {
  /** The operationId: the method name a generated client gives the route (`createLicense`). */
  id: string;
  /** One line, imperative: "Create a license". */
  summary: string;
  /** What it does and what a caller can rely on. Scopes and errors are appended from the route's decorators. */
  description: string;
  /** A request body that works as it stands (the document checks it against the body's schema). */
  example?: Record<string, unknown>;
}

/**
 * Documents a route in the OpenAPI document. Who may call it (`@AllowScopes`) and what it can fail
 * with (`@ApiProblems`) are added to the description by openapi.ts from those decorators, so the
 * words here cannot drift from what the route enforces.
 */
export function Operation({ id, summary, description, example }: OperationDoc): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: id, summary, description }),
    ...(example ? [ApiExtension(REQUEST_EXAMPLE_EXTENSION, example)] : []),
  );
}
