import { ConfigError, loadConfig, type ConfigClass } from '@matchplane/config';

/** The problems loading `env` into `configClass` reports; fails the test when it loads. */
export function configProblems<T extends object>(
  configClass: ConfigClass<T>,
  env: Record<string, string>,
): string[] {
  try {
    loadConfig(configClass, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
