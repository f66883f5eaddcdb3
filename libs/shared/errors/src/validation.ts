import { ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldError } from './domain-error';

/** Flattens class-validator's tree into `{field, message}` pairs with dotted paths (`hardware_binding.fingerprint`). */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/**
 * The one validation policy of the platform, used by the gateway for HTTP and by every service for
 * bus messages: unknown fields are rejected, nothing is coerced implicitly, and a failure is a
 * `validation_failed` DomainError with field errors.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => DomainError.validation(flattenValidationErrors(errors)),
  });
}
