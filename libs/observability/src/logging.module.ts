import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { destination } from 'pino';
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

@Module({})
export class LoggingModule {
  static forRoot(config: LoggingConfig, appName: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: [
            {
              name: appName,
              level: config.LOG_LEVEL,
              redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
            },
            // Synchronous writes: Nest re-raises SIGTERM right after the shutdown hooks, and an
            // asynchronous stream would lose the last lines (the ones that say how it stopped).
            config.LOG_FORMAT === 'pretty'
              ? pretty({
                  sync: true,
                  singleLine: true,
                  translateTime: 'SYS:HH:MM:ss.l',
                  ignore: 'pid,hostname',
                })
              : destination({ dest: 1, sync: true }),
          ],
          // Health probes and scrapes every few seconds would drown the request log.
          exclude: [
            { method: RequestMethod.GET, path: 'health' },
            { method: RequestMethod.GET, path: 'live' },
            { method: RequestMethod.GET, path: 'metrics' },
          ],
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
