import { ValidateBy, buildMessage } from 'class-validator';
import { Type } from 'class-transformer';

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
