import {
  type DynamicModule,
  type INestApplicationContext,
  Module,
  RequestMethod,
} from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DestinationStream } from 'pino';
import type { LoggingConfig } from '@matchplane/config';
import { AppLogger, createAppPino } from './app-logger';

@Module({})
export class LoggingModule {
  static forRoot(
    config: LoggingConfig,
    appName: string,
    /** Where the lines go instead of stdout (a test's memory stream). */
    to?: DestinationStream,
  ): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            logger: createAppPino(config, appName, to),
            // One short line a request: what was asked and how it was answered, never every
            // header (1.3 KB a line); the request id ties it to the request's other lines.
            serializers: {
              req: (request: IncomingMessage & { id?: unknown }) => ({
                id: request.id,
                method: request.method,
                url: request.url,
              }),
              res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
            },
          },
          // Health probes and scrapes every few seconds would drown the request log.
          exclude: [
            { method: RequestMethod.GET, path: 'health' },
            { method: RequestMethod.GET, path: 'live' },
            { method: RequestMethod.GET, path: 'metrics' },
          ],
        }),
      ],
      providers: [AppLogger],
      exports: [LoggerModule, AppLogger],
    };
  }
}

/** Hands the app's lines to its pino logger (after the boot logger's). */
export function useAppLogger(app: INestApplicationContext): AppLogger {
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  return logger;
}
