import { ValidateBy, buildMessage } from 'class-validator';

export interface QueueMode {
  readonly mode: string;
  readonly teamSize: number;
  readonly teamCount: number;
}

const NAME = '[a-z0-9][a-z0-9_-]{0,63}';
const MODE_PATTERN = new RegExp(`^${NAME}:([1-9]|[1-5][0-9])x([2-9])$`);
const REGION_PATTERN = new RegExp(`^${NAME}$`);

function items(raw: string): string[] {
  return raw.split(',').map((item) => item.trim());
}

/** "duel:1x2,squad:4x2" -> modes with team size and team count (throws on a malformed list). */
export function parseQueueModes(raw: string): QueueMode[] {
  const modes = items(raw).map((item) => {
    const match = MODE_PATTERN.exec(item);
    if (!match) throw new Error(`"${item}" is not mode:<team size>x<team count>`);
    return {
      mode: item.slice(0, item.indexOf(':')),
      teamSize: Number(match[1]),
      teamCount: Number(match[2]),
    };
  });
  const names = new Set(modes.map((m) => m.mode));
  if (names.size !== modes.length) throw new Error('a mode is listed twice');
  return modes;
}

/** "eu-west,us-east" -> region names (throws on a malformed or repeated name). */
export function parseRegions(raw: string): string[] {
  const regions = items(raw);
  const bad = regions.find((region) => !REGION_PATTERN.test(region));
  if (bad !== undefined)
    throw new Error(`"${bad}" is not a region name (lowercase letters, digits, "-", "_")`);
  if (new Set(regions).size !== regions.length) throw new Error('a region is listed twice');
  return regions;
}

/** Validates a comma-separated list with `parse`, using its error as the message. */
export function IsParsedList(
  parse: (raw: string) => unknown,
  expectation: string,
): PropertyDecorator {
  return ValidateBy({
    name: 'isParsedList',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return false;
        try {
          parse(value);
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: buildMessage((prefix) => `${prefix}$property must be ${expectation}`),
    },
  });
}
