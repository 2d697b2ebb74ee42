import { type LoggerService } from '@nestjs/common';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import pino, { destination, type DestinationStream, type Logger as Pino } from 'pino';
import pretty from 'pino-pretty';
import type { LoggingConfig } from '@matchplane/config';

/** Paths never written to a log line: credentials of every kind. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-operator-token"]',
  'req.headers["sec-websocket-protocol"]',
  'res.headers["set-cookie"]',
];

/**
 * Nest's per-module and per-route boot lines (about 290 at info for the API): kept at debug, where
 * someone looking for the route map asks for them.
 */
const FRAMEWORK_BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Nest passes a line's context as its last argument. */
export function isFrameworkBootLine(optionalParams: readonly unknown[]): boolean {
  const context = optionalParams[optionalParams.length - 1];
  return typeof context === 'string' && FRAMEWORK_BOOT_CONTEXTS.has(context);
}

/**
 * A process's pino logger, made here for the boot logger and again for the app's (nestjs-pino)
 * logger: two instances of one format, so every line of a process looks alike from its first to
 * its last. Both write synchronously: their lines keep their order, and Nest re-raises SIGTERM
 * right after the shutdown hooks, so an asynchronous stream would lose the last lines (the ones
 * that say how it stopped).
 */
export function createAppPino(
  config: LoggingConfig,
  appName: string,
  /** Where the lines go instead of stdout (a test's memory stream). */
  to?: DestinationStream,
): Pino {
  return pino(
    {
      name: appName,
      level: config.LOG_LEVEL,
      redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    },
    to ??
      (config.LOG_FORMAT === 'pretty'
        ? pretty({
            sync: true,
            singleLine: true,
            translateTime: 'SYS:HH:MM:ss.l',
            ignore: 'pid,hostname',
          })
        : destination({ dest: 1, sync: true })),
  );
}

/** Nest's LoggerService over a pino logger until the app's own exists (same lines, same format). */
export class PinoBootLogger implements LoggerService {
  constructor(private readonly pino: Pino) {}

  log(message: unknown, ...optionalParams: unknown[]): void {
    if (isFrameworkBootLine(optionalParams)) this.write('debug', message, optionalParams);
    else this.write('info', message, optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.write('warn', message, optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.write('debug', message, optionalParams);
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.write('trace', message, optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.write('fatal', message, optionalParams);
  }

  private write(
    level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal',
    message: unknown,
    optionalParams: readonly unknown[],
  ): void {
    const last = optionalParams[optionalParams.length - 1];
    const context = typeof last === 'string' ? last : undefined;
    if (message instanceof Error) this.pino[level]({ context, err: message }, message.message);
    else if (typeof message === 'object' && message !== null)
      this.pino[level]({ context, ...message });
    else this.pino[level]({ context }, String(message));
  }
}

/** The app's logger (nestjs-pino), with Nest's boot lines moved to debug like the boot logger's. */
export class AppLogger extends NestPinoLogger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    if (isFrameworkBootLine(optionalParams)) super.debug(message, ...optionalParams);
    else super.log(message, ...optionalParams);
  }
}
