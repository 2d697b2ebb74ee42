import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
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
          pinoHttp: {
            name: appName,
            level: config.LOG_LEVEL,
            redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
            transport:
              config.LOG_FORMAT === 'pretty'
                ? { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }
                : undefined,
          },
          // Health probes and scrapes every few seconds would drown the request log.
          exclude: [
            { method: RequestMethod.GET, path: 'health' },
            { method: RequestMethod.GET, path: 'metrics' },
          ],
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
