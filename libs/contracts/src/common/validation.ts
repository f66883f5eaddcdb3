import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

/** The field may be left out, but when present it must not be null. */
export const Optional = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/** The field may be left out or be null (null has a meaning, such as "perpetual" or "clear"). */
export const Nullable = (): PropertyDecorator =>
  ValidateIf((_object, value) => value !== undefined && value !== null);

/**
 * Query strings arrive as text; a decimal integer becomes a number, anything else is left as it is
 * so that the integer check rejects it instead of it being silently coerced.
 */
export const IntegerQuery = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value,
  );
