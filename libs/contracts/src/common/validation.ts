import { Transform } from 'class-transformer';
import { ValidateBy, ValidateIf, ValidationOptions, buildMessage } from 'class-validator';

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

/**
 * Text PostgreSQL can store and return exactly: no NUL character (text columns refuse it) and no
 * lone surrogate (it has no UTF-8 form, and PostgreSQL's JSON parser refuses its escape).
 */
export const IsStorableText = (validationOptions?: ValidationOptions): PropertyDecorator =>
  ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && !value.includes('\u0000') && value.isWellFormed(),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be text without NUL characters or lone surrogates`,
          validationOptions,
        ),
      },
    },
    validationOptions,
  );
