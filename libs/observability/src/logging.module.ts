import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { LoggingConfig } from '@matchplane/config';
import { AppLogger, createAppPino } from './app-logger';
import { RequestLog } from './request-logging';

@Module({})
export class LoggingModule {
  static forRoot(
    config: LoggingConfig,
    appName: string,
    /** Where the lines go instead of stdout (a test's memory stream). */
    to?: DestinationStream,
  ): DynamicModule {
    const logger = createAppPino(config, appName, to);
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: { logger },
          // Requests are bound by logRequests (request-logging.ts), a Fastify hook, not middleware.
          forRoutes: [],
        }),
      ],
      providers: [AppLogger, { provide: RequestLog, useValue: new RequestLog(logger) }],
      exports: [LoggerModule, AppLogger, RequestLog],
    };
  }
}

/** Hands the app's lines to its pino logger (after the boot logger's). */
export function useAppLogger(app: INestApplicationContext): AppLogger {
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  return logger;
}
