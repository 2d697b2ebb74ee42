import { ValidateBy, buildMessage } from 'class-validator';
import { Transform, Type } from 'class-transformer';

/** An integer within [min, max], parsed from its decimal string; one clear message when not. */
export function IsIntInRange(min: number, max: number): PropertyDecorator {
  const validate = ValidateBy({
    name: 'isIntInRange',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
      defaultMessage: buildMessage(
        (prefix) => `${prefix}$property must be an integer from ${min} to ${max}`,
      ),
    },
  });
  return (target, key) => {
    Type(() => Number)(target, key);
    validate(target, key);
  };
}

export function IsPort(): PropertyDecorator {
  return IsIntInRange(1, 65535);
}

/** A switch written `true` or `false` (exactly), read as a boolean; one clear message when not. */
export function IsFlag(): PropertyDecorator {
  const validate = ValidateBy({
    name: 'isFlag',
    validator: {
      validate: (value: unknown) => typeof value === 'boolean',
      defaultMessage: buildMessage((prefix) => `${prefix}$property must be true or false`),
    },
  });
  const parse = Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  );
  return (target, key) => {
    parse(target, key);
    validate(target, key);
  };
}
