import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { sqlStateOf } from '@matchplane/persistence';
import { sleep } from './retention/retention.purger';

/**
 * The maintenance loops' shape: run a pass, wait the interval, until shutdown, which aborts the
 * pass before its next batch. `runPass` never throws: a failed pass (the database down, say) is
 * its subclass's log line and metric, and the next pass simply tries again — never a crash loop.
 */
export abstract class PassScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly stopping = new AbortController();
  private loop?: Promise<void>;

  protected abstract readonly intervalMs: number;

  abstract runPass(): Promise<unknown>;

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.runPass();
      await sleep(this.intervalMs, this.stopping.signal);
    }
  }
}

/** An error for a pass's log line: its message, with the SQLSTATE when PostgreSQL raised it. */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return describeError(error.errors[0]);
  const message = error instanceof Error ? error.message || error.name : String(error);
  const sqlState = sqlStateOf(error);
  return sqlState ? `${message} (SQLSTATE ${sqlState})` : message;
}
