import { NestFactory } from '@nestjs/core';
import { type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import type { LoggingConfig } from '@matchplane/config';
import { createAppPino, PinoBootLogger } from './app-logger';
import { useAppLogger } from './logging.module';

/**
 * The logger used until the app's own exists, in the same format (pino). Logs are not buffered
 * until then: a process waiting for its database must say so while it waits.
 */
export function bootLogger(appName: string, config: LoggingConfig): PinoBootLogger {
  return new PinoBootLogger(createAppPino(config, appName));
}

/**
 * Boots a worker app without an HTTP server; closes cleanly (lifecycle hooks run) on
 * SIGTERM/SIGINT.
 */
export async function bootstrapWorker(
  rootModule: DynamicModule | Type,
  appName: string,
  config: LoggingConfig,
): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(rootModule, {
    logger: bootLogger(appName, config),
  });
  useAppLogger(app);
  app.enableShutdownHooks();
  await app.init();
  return app;
}

/** Last-resort handler for an entrypoint's promise: one line on stderr, exit 1. */
export function exitOnBootFailure(appName: string): (error: unknown) => never {
  return (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${appName}: failed to start: ${message}\n`);
    process.exit(1);
  };
}
