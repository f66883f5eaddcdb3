import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { compiledValidation, flattenValidationErrors } from '@licensing/shared/errors';

type Class<T> = new () => T;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a stream message (an event, a sync report, an audit entry) with the class-validator class
 * that declares it: strict UTF-8, JSON, an object, then the class's own rules (`validateRecord`).
 * The one decoder of every consumer: no hand-written validators. A failure names every field at fault.
 */
export function decodeMessage<T extends object>(
  type: Class<T>,
  data: Uint8Array,
): { value: T } | { problem: string } {
  const parsed = parseMessage(data);
  if ('problem' in parsed) return parsed;
  return validateRecord(type, parsed.json);
}

/** A stream message's JSON: strict UTF-8, then `JSON.parse`. */
export function parseMessage(data: Uint8Array): { json: unknown } | { problem: string } {
  try {
    return { json: JSON.parse(utf8.decode(data)) };
  } catch {
    return { problem: 'not JSON' };
  }
}

/**
 * A parsed record checked against its class: an object, then the class's own rules (compiled
 * once, see `compiledValidation`; class-validator itself decides what that does not accept).
 */
export function validateRecord<T extends object>(
  type: Class<T>,
  raw: unknown,
): { value: T } | { problem: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { problem: 'not an object' };
  const accepted = compiledValidation(type, { whitelist: false })?.accept(raw);
  if (accepted) return { value: accepted };
  const value = plainToInstance(type, raw);
  const errors = validateSync(value, {
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    return {
      problem: flattenValidationErrors(errors)
        .map((error) => error.message)
        .join('; '),
    };
  }
  return { value };
}
