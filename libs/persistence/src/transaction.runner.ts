import { Logger } from '@nestjs/common';
import { CodedError, LibraryErrorCode } from '@matchplane/errors';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { backoffDelayMs, sleep } from './backoff';
import { sendWithNext } from './pool-client';

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
  /**
   * Default true. False: the COMMIT returns before its WAL reaches the disk (PostgreSQL's
   * synchronous_commit=off, for this transaction alone). Everyone sees the transaction at once,
   * but a crash of PostgreSQL (not of this process) may forget it, with up to about 3 ×
   * wal_writer_delay (600 ms by default) of such commits. Only for writes whose loss is harmless.
   */
  synchronousCommit?: boolean;
}

export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = candidate.driverError?.code ?? candidate.code;
  return typeof code === 'string' ? code : undefined;
}

export class TransactionRetriesExhaustedError extends CodedError<
  typeof LibraryErrorCode.TRANSACTION_RETRIES_EXHAUSTED
> {
  constructor(
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    super(
      LibraryErrorCode.TRANSACTION_RETRIES_EXHAUSTED,
      `transaction failed after ${attempts} attempts: ${(lastError as Error)?.message ?? String(lastError)}`,
    );
    this.name = 'TransactionRetriesExhaustedError';
  }
}

const effectLogger = new Logger('UnitOfWork');

/** Work done once a transaction committed (a publish, a Redis update); it should not throw. */
export type AfterCommit = () => void | Promise<void>;

export interface AfterCommitOptions {
  /**
   * Default true: the transaction's caller gets its result once the effect settled. False: the
   * effect is started after the commit and not waited for (a heartbeat's projection refresh, which
   * the next heartbeat repairs). A batch is waited for when any of its registrations asked so.
   */
  readonly awaited?: boolean;
}

interface Registered {
  readonly effect: AfterCommit;
  readonly awaited: boolean;
}

/**
 * One transaction and the effects its stores registered for after its commit: the typed handle a
 * store write takes (its `manager` runs the statements), so code outside a transaction cannot call
 * such a write by mistake. Effects are kept in memory (no statement, no round trip) under a key,
 * so a store registering the same effect twice (the relay's wake-up for each write, a ticket's
 * projection after each of its changes) runs it once, with the last registration. A retried
 * attempt starts a new unit: the effects of an attempt that rolled back are dropped with it.
 */
export class UnitOfWork {
  private readonly effects = new Map<string, Registered>();
  private readonly batches = new Map<string, Map<string, unknown>>();
  private closed = false;

  private constructor(readonly manager: EntityManager) {}

  /**
   * The unit of `manager`'s transaction, until {@link close}: for a transaction managed by hand
   * (the matcher's lease connection); everything else goes through {@link runInTransaction}.
   */
  static open(manager: EntityManager): UnitOfWork {
    return new UnitOfWork(manager);
  }

  /** The transaction ended (committed or not): no more registrations. */
  close(): void {
    this.closed = true;
  }

  afterCommit(key: string, effect: AfterCommit, options: AfterCommitOptions = {}): void {
    // A unit kept past its transaction: the effect would be dropped without a word.
    if (this.closed)
      throw new Error(`after-commit effect ${key} registered on a closed unit of work`);
    // Re-inserted, so effects run in the order of their last registration.
    this.effects.delete(key);
    this.effects.set(key, { effect, awaited: options.awaited ?? true });
  }

  /**
   * Adds `item` (under `itemKey`, the last registration of a key winning) to the batch `key`, whose
   * one effect `run` gets every item of the batch once the transaction committed: many tickets'
   * projections in one Redis pipeline rather than one round trip each.
   */
  afterCommitBatch<T>(
    key: string,
    itemKey: string,
    item: T,
    run: (items: readonly T[]) => void | Promise<void>,
    options: AfterCommitOptions = {},
  ): void {
    let batch = this.batches.get(key) as Map<string, T> | undefined;
    if (!batch) {
      batch = new Map<string, T>();
      this.batches.set(key, batch);
    }
    batch.delete(itemKey);
    batch.set(itemKey, item);
    const items = batch;
    const awaited = (options.awaited ?? true) || this.effects.get(key)?.awaited === true;
    this.afterCommit(key, () => run([...items.values()]), { awaited });
  }

  /**
   * Starts every effect in registration order and waits for the awaited ones. The transaction has
   * committed, so an effect that fails is logged, never thrown at the caller.
   */
  async runEffects(): Promise<void> {
    const awaited: Promise<void>[] = [];
    for (const { effect, awaited: waitFor } of this.effects.values()) {
      const settled = runLogged(effect);
      if (waitFor) awaited.push(settled);
    }
    await Promise.all(awaited);
  }
}

async function runLogged(effect: AfterCommit): Promise<void> {
  try {
    await effect();
  } catch (reason) {
    effectLogger.warn(
      `after-commit effect failed: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  }
}

/**
 * The one way to run a transaction: `work` in one transaction at the given isolation level, as a
 * {@link UnitOfWork} whose after-commit effects run once it committed, re-run from the start on
 * serialization failures (40001) and deadlocks (40P01). `work` must therefore be free of side
 * effects outside the transaction (no publishes, no HTTP calls): register them with
 * {@link UnitOfWork.afterCommit} instead.
 */
export async function runInTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>,
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
  work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>,
  options: TransactionOptions,
  onAttempt?: (attempt: number) => void,
): Promise<T> {
  const isolation = options.isolation ?? 'READ COMMITTED';
  const maxAttempts = options.maxAttempts ?? 5;
  const baseMs = options.baseDelayMs ?? 10;
  const attempt = async (manager: EntityManager) => {
    const unit = UnitOfWork.open(manager);
    try {
      if (options.synchronousCommit === false) {
        await sendWithNext(manager, 'SET LOCAL synchronous_commit = off', []);
      }
      return { result: await work(manager, unit), unit };
    } catch (error) {
      unit.close();
      throw error;
    }
  };
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    let committed: { result: T; unit: UnitOfWork };
    onAttempt?.(attemptNumber);
    try {
      // READ COMMITTED is PostgreSQL's default: naming it would cost a SET TRANSACTION round trip
      // on every write (this assumes default_transaction_isolation is left at its default).
      committed =
        isolation === 'READ COMMITTED'
          ? await dataSource.transaction(attempt)
          : await dataSource.transaction(isolation, attempt);
    } catch (error) {
      const sqlState = sqlStateOf(error);
      if (sqlState === undefined || !RETRYABLE_SQLSTATES.has(sqlState)) throw error;
      if (attemptNumber >= maxAttempts)
        throw new TransactionRetriesExhaustedError(attemptNumber, error);
      const delayMs = backoffDelayMs(attemptNumber, { baseMs, capMs: 1_000 });
      options.onRetry?.({ attempt: attemptNumber, sqlState, delayMs });
      await sleep(delayMs);
      continue;
    }
    committed.unit.close();
    await committed.unit.runEffects();
    return committed.result;
  }
}
