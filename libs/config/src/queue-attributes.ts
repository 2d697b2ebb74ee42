import { parseModeAttributeSchema, type ModeAttributeSchema } from '@matchplane/domain';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { parseQueueModes, type QueueMode } from './queue-policy';

/**
 * QUEUE_MODE_ATTRIBUTES: a JSON object of mode -> declaration (see parseModeAttributeSchema in
 * libs/domain for the shape). A mode it does not name takes no attributes. The API validates
 * tickets against it and the matcher applies its rules, so both read this one variable.
 */
export function parseQueueModeAttributes(
  raw: string | undefined,
  modes: readonly string[] | undefined,
): Map<string, ModeAttributeSchema> {
  const { schemas, problems } = readQueueModeAttributes(raw, modes);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return schemas;
}

function readQueueModeAttributes(
  raw: string | undefined,
  modes: readonly string[] | undefined,
): { schemas: Map<string, ModeAttributeSchema>; problems: string[] } {
  const schemas = new Map<string, ModeAttributeSchema>();
  if (raw === undefined) return { schemas, problems: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return { schemas, problems: [`is not JSON (${(error as Error).message})`] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { schemas, problems: ['must be a JSON object of mode -> {attributes, rules}'] };
  }
  const problems: string[] = [];
  for (const [mode, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (modes && !modes.includes(mode)) {
      problems.push(`names mode ${JSON.stringify(mode)}, which QUEUE_MODES does not list`);
      continue;
    }
    const { schema, problems: modeProblems } = parseModeAttributeSchema(value, mode);
    problems.push(...modeProblems);
    schemas.set(mode, schema);
  }
  return { schemas, problems };
}

/** The modes of a configuration object being validated, or undefined when QUEUE_MODES is itself invalid. */
export function queueModesOf(object: object): string[] | undefined {
  try {
    return parseQueueModes((object as { QUEUE_MODES?: string }).QUEUE_MODES ?? '').map(
      (mode) => mode.mode,
    );
  } catch {
    return undefined; // QUEUE_MODES reports its own problem.
  }
}

/**
 * A variable whose problems depend on the object's QUEUE_MODES (it names modes): valid when
 * `problemsOf` finds none, else its message names every problem.
 */
export function ValidatedAgainstQueueModes(
  name: string,
  problemsOf: (raw: string, modes: readonly string[] | undefined, object: object) => string[],
): PropertyDecorator {
  const problems = (args: ValidationArguments) =>
    typeof args.value === 'string'
      ? problemsOf(args.value, queueModesOf(args.object), args.object)
      : ['must be a string'];
  return ValidateBy({
    name,
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) =>
        args !== undefined && problems(args).length === 0,
      defaultMessage: (args?: ValidationArguments) =>
        args ? `${args.property} ${problems(args).join('; ')}` : 'is invalid',
    },
  });
}

/** Validates QUEUE_MODE_ATTRIBUTES against the object's QUEUE_MODES, naming every problem. */
export function IsQueueModeAttributes(): PropertyDecorator {
  return ValidatedAgainstQueueModes('isQueueModeAttributes', (raw, modes, object) => {
    const { schemas, problems } = readQueueModeAttributes(raw, modes);
    return [...problems, ...roleSlotProblems(schemas, object)];
  });
}

/** A roles rule must fit the mode's smallest team (hunt:4+1 cannot ask for a healer and a tank). */
function roleSlotProblems(
  schemas: ReadonlyMap<string, ModeAttributeSchema>,
  object: object,
): string[] {
  let shapes: QueueMode[];
  try {
    shapes = parseQueueModes((object as { QUEUE_MODES?: string }).QUEUE_MODES ?? '');
  } catch {
    return []; // QUEUE_MODES reports its own problem.
  }
  return shapes.flatMap(({ mode, teamSizes }) => {
    const rule = schemas.get(mode)?.rules.find((r) => r.kind === 'roles');
    if (!rule || rule.kind !== 'roles') return [];
    const slots = Object.values(rule.perTeam).reduce((total, count) => total + count, 0);
    const smallest = Math.min(...teamSizes);
    return slots > smallest
      ? [
          `mode ${mode}: its roles rule asks for ${slots} players a team, its smallest team has ${smallest}`,
        ]
      : [];
  });
}
