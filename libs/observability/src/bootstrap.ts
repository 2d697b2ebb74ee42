import { NestFactory } from '@nestjs/core';
import { ConsoleLogger, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { Logger } from 'nestjs-pino';
import type { LoggingConfig } from '@matchplane/config';

/**
 * The logger used until the app's pino logger exists. Logs are not buffered until then: a
 * process waiting for its database must say so while it waits.
 */
export function bootLogger(appName: string, config: LoggingConfig): ConsoleLogger {
  const json = config.LOG_FORMAT === 'json';
  return new ConsoleLogger(appName, { json, colors: !json && process.stdout.isTTY === true });
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
  const app = await NestFactory.createApplicationContext(rootModule, { logger: bootLogger(appName, config) });
  app.useLogger(app.get(Logger));
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
