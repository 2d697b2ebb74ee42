import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sqlStateOf } from '@matchplane/persistence';
import { sleep } from './retention/retention.purger';

/**
 * The maintenance app's loop shape, shared by retention and reconciliation: run a pass, wait the
 * interval, until shutdown. A failed pass is one warning and a metric, never a crash, so a
 * database outage never becomes a crash loop; shutdown aborts the pass before its next batch and
 * waits for it.
 */
export abstract class PassScheduler<Report>
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  protected readonly logger = new Logger(this.constructor.name);
  protected readonly stopping = new AbortController();
  private loop?: Promise<void>;

  /** What a pass is called in its log lines ("retention pass"). */
  protected abstract readonly passName: string;
  protected abstract intervalMs(): number;
  protected abstract pass(signal: AbortSignal): Promise<Report>;
  /** Records a finished pass (metrics, the log line); may read more before it logs. */
  protected abstract recordPass(report: Report): Promise<void> | void;
  protected abstract recordFailure(): void;

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** One pass with its metrics and log line; never throws. Undefined when the pass failed. */
  async runPass(): Promise<Report | undefined> {
    let report: Report;
    try {
      report = await this.pass(this.stopping.signal);
    } catch (error) {
      this.recordFailure();
      this.logger.warn(
        `${this.passName} failed, next pass in ${this.intervalMs() / 1_000} s: ${describeError(error)}`,
      );
      return undefined;
    }
    await this.recordPass(report);
    return report;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.runPass();
      await sleep(this.intervalMs(), this.stopping.signal);
    }
  }
}

/** An error as one log fragment: the first of an AggregateError, with its SQLSTATE when it has one. */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return describeError(error.errors[0]);
  const message = error instanceof Error ? error.message || error.name : String(error);
  const sqlState = sqlStateOf(error);
  return sqlState ? `${message} (SQLSTATE ${sqlState})` : message;
}
