import { IsIn } from 'class-validator';
import { EnvVar } from './env-var.decorator';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every app logs; nothing else is common to all of them. */
export class LoggingConfig {
  @EnvVar({ description: 'Minimum log level' })
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @EnvVar({ description: 'Log format: json (one object per line) or pretty (for humans)' })
  @IsIn(['json', 'pretty'])
  LOG_FORMAT: 'json' | 'pretty' = 'json';
}
