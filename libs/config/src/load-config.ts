import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { connectionTopologyProblems } from './connection-hosts';
import { expandConnectionUrls } from './connection-urls';
import { envVarDocs } from './env-var.decorator';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * A config class: its properties are the variables. It may declare checks across variables
 * (`static crossVariableProblems`), which loading runs once every variable is valid on its own, so
 * an inconsistent combination fails at the same place, in the same way, as a malformed variable.
 */
export interface ConfigClass<T> {
  new (): T;
  // NoInfer: a class that inherits its base's check is still loaded as itself, not as the base.
  crossVariableProblems?(config: NoInfer<T>): string[];
}

/**
 * Reads and validates environment variables into a typed config object.
 * Variables absent from the environment take the class's defaults; empty strings count as absent.
 */
export function loadConfig<T extends object>(
  configClass: ConfigClass<T>,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const docs = envVarDocs(configClass);
  const known = Object.keys(new configClass());
  const plain: Record<string, string> = {};
  for (const key of known) {
    const value = env[key];
    if (value !== undefined && value !== '') plain[key] = value;
  }
  const origins = new Map<string, string>();
  const urlProblems = expandConnectionUrls(plain, origins);
  urlProblems.push(...connectionTopologyProblems(plain, origins));
  const instance = plainToInstance(configClass, plain, { exposeDefaultValues: true });
  const errors = validateSync(instance, { forbidUnknownValues: true, stopAtFirstError: true });
  if (urlProblems.length > 0 || errors.length > 0) {
    throw new ConfigError([
      ...urlProblems,
      ...errors.map((error) =>
        describeError(error, plain, docs.get(error.property)?.secret === true, origins),
      ),
    ]);
  }
  const crossProblems = configClass.crossVariableProblems?.(instance) ?? [];
  if (crossProblems.length > 0) throw new ConfigError(crossProblems);
  return Object.freeze(instance);
}

function describeError(
  error: ValidationError,
  raw: Record<string, string>,
  secret: boolean,
  origins: ReadonlyMap<string, string>,
): string {
  const expected = Object.values(error.constraints ?? {})
    .map((message) => message.replace(new RegExp(`^${error.property}\\s+`), ''))
    .join(', ');
  const given = raw[error.property];
  const got =
    given === undefined
      ? 'it is not set'
      : secret
        ? 'a value was given; it is secret, so not shown'
        : `got "${given}"`;
  const origin = origins.get(error.property);
  if (origin !== undefined) return `${error.property} ${expected} (${got} from ${origin})`;
  return `${error.property} ${expected} (${got})`;
}

/** For entrypoints: on invalid configuration print one line and exit 1 instead of a stack trace. */
export function loadConfigOrExit<T extends object>(
  configClass: ConfigClass<T>,
  appName: string,
): T {
  try {
    return loadConfig(configClass);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${appName}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** A view of a config object safe to log: secrets replaced. */
export function redactedConfig<T extends object>(config: T): Record<string, unknown> {
  const docs = envVarDocs(config.constructor as new () => T);
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [
      key,
      docs.get(key)?.secret && value !== undefined ? '[redacted]' : value,
    ]),
  );
}
