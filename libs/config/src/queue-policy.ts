import { ValidateBy, buildMessage } from 'class-validator';

export interface QueueMode {
  readonly mode: string;
  /** Players per team; for asymmetric teams the largest team's (the largest party it takes). */
  readonly teamSize: number;
  readonly teamCount: number;
  /** Each team's size in team order: `hunt:4+1` -> [4, 1]; `squad:4x2` -> [4, 4]. */
  readonly teamSizes: readonly number[];
}

const NAME = '[a-z0-9][a-z0-9_-]{0,63}';
const MODE_NAME_PATTERN = new RegExp(`^${NAME}$`);
const SIZE = '([1-9]|[1-5][0-9])';
const SYMMETRIC_PATTERN = new RegExp(`^${SIZE}x([2-9])$`);
const ASYMMETRIC_PATTERN = /^[0-9]+(\+[0-9]+)+$/;
const REGION_PATTERN = new RegExp(`^${NAME}$`);

function items(raw: string): string[] {
  return raw.split(',').map((item) => item.trim());
}

export const QUEUE_MODES_SYNTAX =
  'comma-separated mode:<team size>x<team count> or mode:<size>+<size>... (a size per team) entries, e.g. duel:1x2,squad:4x2,hunt:4+1';

/**
 * "duel:1x2,squad:4x2,hunt:4+1" -> modes with their teams' sizes (throws on a malformed list,
 * naming the entry and what is wrong with it).
 */
export function parseQueueModes(raw: string): QueueMode[] {
  const modes = items(raw).map(parseQueueMode);
  const names = new Set(modes.map((m) => m.mode));
  if (names.size !== modes.length) throw new Error('a mode is listed twice');
  return modes;
}

function parseQueueMode(item: string): QueueMode {
  const colon = item.indexOf(':');
  const mode = colon < 0 ? item : item.slice(0, colon);
  const shape = colon < 0 ? '' : item.slice(colon + 1);
  if (colon < 0 || !MODE_NAME_PATTERN.test(mode)) {
    throw new Error(
      `"${item}" is not mode:<teams> (a mode name is 1-64 lowercase letters, digits, "-" or "_")`,
    );
  }
  const symmetric = SYMMETRIC_PATTERN.exec(shape);
  if (symmetric) {
    const teamSize = Number(symmetric[1]);
    const teamCount = Number(symmetric[2]);
    return { mode, teamSize, teamCount, teamSizes: new Array<number>(teamCount).fill(teamSize) };
  }
  if (ASYMMETRIC_PATTERN.test(shape)) {
    const teamSizes = shape.split('+').map(Number);
    if (teamSizes.length > 9) throw new Error(`"${item}": at most 9 teams`);
    if (teamSizes.some((size) => size < 1 || size > 59)) {
      throw new Error(`"${item}": each team's size must be 1-59`);
    }
    return { mode, teamSize: Math.max(...teamSizes), teamCount: teamSizes.length, teamSizes };
  }
  throw new Error(
    `"${item}" is not mode:<team size>x<team count> (size 1-59, 2-9 teams) or mode:<size>+<size>... (a size per team)`,
  );
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
      defaultMessage: buildMessage((prefix, args) => {
        // The parser's own refusal names the entry and what is wrong with it.
        let reason = '';
        try {
          if (typeof args?.value === 'string') parse(args.value);
        } catch (error) {
          reason = ` (${error instanceof Error ? error.message : String(error)})`;
        }
        return `${prefix}$property must be ${expectation}${reason}`;
      }),
    },
  });
}
