import { ArgumentMetadata, ValidationError, ValidationPipe, ValidationPipeOptions } from '@nestjs/common';
import { compiledValidation } from './compiled-validation';
import { DomainError, FieldError } from './domain-error';

/** Flattens class-validator's tree into `{field, message}` pairs with dotted paths (`hardware_binding.fingerprint`). */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/** The options of the platform's validation pipe (`createValidationPipe`). */
export const VALIDATION_OPTIONS: ValidationPipeOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transform: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => DomainError.validation(flattenValidationErrors(errors)),
};

/**
 * Nest's validation pipe, which first tries the class's compiled validation (`compiledValidation`):
 * a value it accepts is returned as the instance Nest's pipe would have returned, without that
 * pipe's per-call work; anything else (a refusal, a class it does not compile) goes through Nest's
 * pipe unchanged, so every answer and error message is the pipe's own.
 */
class CompiledValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype } = metadata;
    if (metatype && this.toValidate(metadata)) {
      const accepted = compiledValidation(metatype as new () => object, { whitelist: true })?.accept(value);
      if (accepted) return accepted;
    }
    return super.transform(value, metadata);
  }
}

/**
 * The one validation policy of the platform, used by the gateway for HTTP and by every service for
 * bus messages: unknown fields are rejected, nothing is coerced implicitly, and a failure is a
 * `validation_failed` DomainError with field errors.
 */
export function createValidationPipe(): ValidationPipe {
  return new CompiledValidationPipe(VALIDATION_OPTIONS);
}
