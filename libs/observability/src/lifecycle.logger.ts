import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';

/**
 * Says when a shutdown starts and when every hook has run, so an operator (and the boot tests)
 * can tell a clean stop from a kill. Nest re-raises the signal afterwards, so a clean stop on
 * SIGTERM still ends with that signal as the exit status.
 */
@Injectable()
export class LifecycleLogger implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Lifecycle');

  beforeApplicationShutdown(signal?: string): void {
    this.logger.log(`shutting down${signal ? ` on ${signal}` : ''}`);
  }

  onApplicationShutdown(): void {
    this.logger.log('stopped cleanly');
  }
}
