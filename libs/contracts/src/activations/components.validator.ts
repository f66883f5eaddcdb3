import { ValidationOptions, registerDecorator } from 'class-validator';

const MAX_COMPONENTS = 20;

/** A flat map of component name → fingerprint: at most 20 entries of non-empty strings up to 512 characters. */
export function IsComponents(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isComponents',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must map at most ${MAX_COMPONENTS} names to fingerprint strings`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return (
            entries.length <= MAX_COMPONENTS &&
            entries.every(
              ([name, fingerprint]) =>
                name.length > 0 &&
                name.length <= 100 &&
                typeof fingerprint === 'string' &&
                fingerprint.length > 0 &&
                fingerprint.length <= 512,
            )
          );
        },
      },
    });
}
