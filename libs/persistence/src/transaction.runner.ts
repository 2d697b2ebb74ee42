import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { backoffDelayMs, sleep } from './backoff';

export type { IsolationLevel };

/** SQLSTATEs after which the whole transaction may simply run again. */
export const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);

export interface TransactionOptions {
  isolation?: IsolationLevel;
  /** Total attempts including the first; default 5. */
  maxAttempts?: number;
  /** Ceiling of the first retry's jittered delay; doubles with each retry (capped at 1 s). */
  baseDelayMs?: number;
  /** Called before each retry, e.g. for a metric or a debug log. */
  onRetry?: (info: { attempt: number; sqlState: string; delayMs: number }) => void;
}

export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = candidate.driverError?.code ?? candidate.code;
  return typeof code === 'string' ? code : undefined;
}

export class TransactionRetriesExhaustedError extends Error {
  constructor(
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    super(
      `transaction failed after ${attempts} attempts: ${(lastError as Error)?.message ?? String(lastError)}`,
    );
    this.name = 'TransactionRetriesExhaustedError';
  }
}

/**
 * Runs `work` in one transaction at the given isolation level, re-running it from the start on
 * serialization failures (40001) and deadlocks (40P01). `work` must therefore be free of side
 * effects outside the transaction (no publishes, no HTTP calls).
 */
export async function runInTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  // Traced only inside a traced operation (an active span exists only while tracing is on): the
  // commit becomes a span of its request's trace, and what it writes to the outbox carries it.
  if (trace.getActiveSpan() === undefined) return runWithRetries(dataSource, work, options);
  const isolation = options.isolation ?? 'READ COMMITTED';
  return (
    trace
      // libs/observability's TRACER_NAME (persistence cannot import it: observability imports persistence).
      .getTracer('matchplane')
      .startActiveSpan(
        'transaction',
        { attributes: { 'db.system.name': 'postgresql', 'db.transaction.isolation': isolation } },
        async (span) => {
          try {
            return await runWithRetries(dataSource, work, options, (attempt) =>
              span.setAttribute('matchplane.attempts', attempt),
            );
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
            throw error;
          } finally {
            span.end();
          }
        },
      )
  );
}

async function runWithRetries<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions,
  onAttempt?: (attempt: number) => void,
): Promise<T> {
  const isolation = options.isolation ?? 'READ COMMITTED';
  const maxAttempts = options.maxAttempts ?? 5;
  const baseMs = options.baseDelayMs ?? 10;
  for (let attempt = 1; ; attempt += 1) {
    onAttempt?.(attempt);
    try {
      // READ COMMITTED is PostgreSQL's default: naming it would cost a SET TRANSACTION round trip
      // on every write (this assumes default_transaction_isolation is left at its default).
      return isolation === 'READ COMMITTED'
        ? await dataSource.transaction(work)
        : await dataSource.transaction(isolation, work);
    } catch (error) {
      const sqlState = sqlStateOf(error);
      if (sqlState === undefined || !RETRYABLE_SQLSTATES.has(sqlState)) throw error;
      if (attempt >= maxAttempts) throw new TransactionRetriesExhaustedError(attempt, error);
      const delayMs = backoffDelayMs(attempt, { baseMs, capMs: 1_000 });
      options.onRetry?.({ attempt, sqlState, delayMs });
      await sleep(delayMs);
    }
  }
}

/** Injectable form of {@link runInTransaction} bound to the app's DataSource. */
export class TransactionRunner {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return runInTransaction(this.dataSource, work, options);
  }
}
