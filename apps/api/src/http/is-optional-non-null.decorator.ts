import { ValidateIf, type ValidationOptions } from 'class-validator';

/**
 * The field may be left out; when present it is validated, `null` included. class-validator's
 * IsOptional also waves `null` through, which reached the services as a value no type allowed
 * (`{"credential": null}` was a 500); the lint forbids IsOptional in the API for that reason.
 */
export function IsOptionalNonNull(options?: ValidationOptions): PropertyDecorator {
  return ValidateIf((_object, value: unknown) => value !== undefined, options);
}
