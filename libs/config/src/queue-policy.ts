import { ValidateBy, buildMessage } from 'class-validator';

export interface QueueMode {
  readonly mode: string;
  /** Players per team; for asymmetric teams the largest team's (the largest party it takes). */
  readonly teamSize: number;
  readonly teamCount: number;
  /** Each team's size in team order: `hunt:4+1` -> [4, 1]; `squad:4x2` -> [4, 4]. */
  readonly teamSizes: readonly number[];
  /**
   * Fill steps, `br:1x100@30000:80@60000:60`: once a match's anchor has waited afterMs, the match
   * may form with minPlayers (whole teams) or more. Absent: full matches only.
   */
  readonly fill?: readonly { readonly afterMs: number; readonly minPlayers: number }[];
}

/** A sanity bound shared with the domain's MAX_PLAYERS_PER_MATCH. */
const MAX_PLAYERS_PER_MATCH = 1000;

const NAME = '[a-z0-9][a-z0-9_-]{0,63}';
const MODE_NAME_PATTERN = new RegExp(`^${NAME}$`);
const SIZE = '([1-9]|[1-5][0-9])';
const SYMMETRIC_PATTERN = new RegExp(`^${SIZE}x([2-9]|[1-9][0-9]|100)$`);
const FILL_STEP_PATTERN = /^([0-9]{1,9}):([0-9]{1,4})$/;
const ASYMMETRIC_PATTERN = /^[0-9]+(\+[0-9]+)+$/;
const REGION_PATTERN = new RegExp(`^${NAME}$`);

function items(raw: string): string[] {
  return raw.split(',').map((item) => item.trim());
}

export const QUEUE_MODES_SYNTAX =
  'comma-separated mode:<team size>x<team count> or mode:<size>+<size>... (a size per team) entries, each optionally followed by fill steps @<afterMs>:<minPlayers>, e.g. duel:1x2,squad:4x2,hunt:4+1,br:1x100@30000:80@60000:60';

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
  const [shape = '', ...steps] = colon < 0 ? [''] : item.slice(colon + 1).split('@');
  const teams = parseTeams(item, mode, colon, shape);
  if (steps.length === 0) return teams;
  return { ...teams, fill: parseFillSteps(item, teams, steps) };
}

function parseTeams(item: string, mode: string, colon: number, shape: string): QueueMode {
  if (colon < 0 || !MODE_NAME_PATTERN.test(mode)) {
    throw new Error(
      `"${item}" is not mode:<teams> (a mode name is 1-64 lowercase letters, digits, "-" or "_")`,
    );
  }
  const symmetric = SYMMETRIC_PATTERN.exec(shape);
  if (symmetric) {
    const teamSize = Number(symmetric[1]);
    const teamCount = Number(symmetric[2]);
    if (teamSize * teamCount > MAX_PLAYERS_PER_MATCH) {
      throw new Error(`"${item}": at most ${MAX_PLAYERS_PER_MATCH} players per match`);
    }
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
    `"${item}" is not mode:<team size>x<team count> (size 1-59, 2-100 teams) or mode:<size>+<size>... (a size per team)`,
  );
}

/** "@30000:80@60000:60" after the teams: each step's wait lowers the minimum, in whole teams. */
function parseFillSteps(
  item: string,
  { teamSize, teamCount, teamSizes }: QueueMode,
  steps: readonly string[],
): { afterMs: number; minPlayers: number }[] {
  if (teamSizes.some((size) => size !== teamSize)) {
    throw new Error(`"${item}": fill steps need teams of one size (<team size>x<team count>)`);
  }
  const full = teamSize * teamCount;
  let previous: { afterMs: number; minPlayers: number } | undefined;
  return steps.map((raw) => {
    const match = FILL_STEP_PATTERN.exec(raw);
    if (!match) throw new Error(`"${item}": "@${raw}" is not @<afterMs>:<minPlayers>`);
    const step = { afterMs: Number(match[1]), minPlayers: Number(match[2]) };
    if (step.afterMs <= 0) throw new Error(`"${item}": a fill step's afterMs must be above 0`);
    if (
      step.minPlayers % teamSize !== 0 ||
      step.minPlayers < 2 * teamSize ||
      step.minPlayers >= full
    ) {
      throw new Error(
        `"${item}": a fill step's minPlayers must be whole teams of ${teamSize}, at least two and fewer than ${full} players (got ${step.minPlayers})`,
      );
    }
    if (previous && (step.afterMs <= previous.afterMs || step.minPlayers >= previous.minPlayers)) {
      throw new Error(
        `"${item}": each fill step must come later (afterMs) and lower the minimum (minPlayers) than the one before`,
      );
    }
    previous = step;
    return step;
  });
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
