import { DomainError, FieldError } from '@licensing/shared/errors';

/**
 * How deep a request body may nest. No request of this API nests deeper than a few levels, and
 * the validation pipe walks a body recursively: a body nested thousands of levels deep would
 * overflow its stack. 32 leaves room for any honest body and none for that.
 */
export const MAX_BODY_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why a string cannot be accepted: PostgreSQL stores no NUL, and a lone surrogate has no UTF-8 form. */
function stringProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}

/**
 * The first thing in a parsed request value (a JSON body, a query string, path parameters) that no
 * service could store or return exactly: a NUL character or a lone surrogate in a string or a key,
 * or nesting deeper than MAX_BODY_DEPTH. Iterative, so that the depth of the input cannot exhaust
 * the stack here either. `field` is the dotted path (`features_used.3`, `hardware_binding.fingerprint`).
 */
export function findIllFormedInput(value: unknown, root = ''): FieldError | undefined {
  const pending: Array<{ value: unknown; field: string; depth: number }> = [{ value, field: root, depth: 0 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { field, depth } = item;
    if (typeof item.value === 'string') {
      const problem = stringProblem(item.value);
      if (problem) return { field: field || 'body', message: `${field || 'body'} ${problem}` };
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (depth >= MAX_BODY_DEPTH) {
      return { field: field || 'body', message: `the request nests deeper than ${MAX_BODY_DEPTH} levels` };
    }
    for (const [key, child] of Object.entries(item.value)) {
      const path = field ? `${field}.${key}` : key;
      const problem = stringProblem(key);
      if (problem) return { field: field || 'body', message: `a key of ${field || 'the body'} ${problem}` };
      pending.push({ value: child, field: path, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Throws the `400 validation_failed` naming the field, when `findIllFormedInput` finds something. */
export function assertWellFormed(value: unknown, root?: string): void {
  const problem = findIllFormedInput(value, root);
  if (problem) throw DomainError.validation([problem]);
}

/** Decodes a request body as strict UTF-8: invalid bytes are a 400, never silently replaced. */
export function decodeUtf8Body(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw DomainError.validation(
      [{ field: 'body', message: 'body must be valid UTF-8' }],
      'The request body is not valid UTF-8',
    );
  }
}
