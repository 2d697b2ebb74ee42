import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AllocationRecord } from '@matchplane/allocation';
import { ErrorCode } from '@matchplane/contracts';
import type { MatchSnapshot } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { MatchStore } from '@matchplane/matches';
import {
  runInTransaction,
  TransactionRetriesExhaustedError,
  type TransactionOptions,
  type UnitOfWork,
} from '@matchplane/persistence';
import { ServerRouteMetrics, type ServerRoute } from './server-route.metrics';

// Registrations of many matches at once conflict under SSI now and then (page-level predicate
// locks); a generous budget keeps that a retry, and exhausting it is a 503 the server retries.
export const SERIALIZABLE: TransactionOptions = {
  isolation: 'SERIALIZABLE',
  maxAttempts: 20,
  baseDelayMs: 5,
};

// Register is the burst path (every new match, at once): READ COMMITTED under row locks keeps
// its gate (docs/architecture/allocation-and-joining.md) without SSI's false conflicts
// between unrelated matches. A deadlock (40P01) is still retried.
export const REGISTER: TransactionOptions = { maxAttempts: 5, baseDelayMs: 5 };

export function stateConflict(match: MatchSnapshot, what: string): CodedError {
  return new CodedError(
    ErrorCode.MATCH_STATE_CONFLICT,
    `Match ${match.id} is ${match.state}: ${what}`,
  );
}

/**
 * How a game-server route runs its transaction: one unit of work (its stores register the relay's
 * wake-up and the moved tickets' projection for after the commit), SERIALIZABLE unless told
 * otherwise, retries counted per route, and retries exhausted answered 503 CONTENDED.
 */
@Injectable()
export class ServerRouteTransactions {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly metrics: ServerRouteMetrics,
  ) {}

  async commit<T>(
    route: ServerRoute,
    work: (manager: EntityManager, now: Date, unit: UnitOfWork) => Promise<T>,
    options: TransactionOptions = SERIALIZABLE,
  ): Promise<T> {
    try {
      return await runInTransaction(
        this.dataSource,
        (manager, unit) => work(manager, new Date(), unit),
        {
          ...options,
          onRetry: ({ sqlState }) => this.metrics.retried(route, sqlState),
        },
      );
    } catch (error) {
      if (error instanceof TransactionRetriesExhaustedError) {
        throw new CodedError(
          ErrorCode.CONTENDED,
          'Too many concurrent changes to this match right now; retry',
          {
            retryAfterSeconds: 1,
          },
        );
      }
      throw error;
    }
  }

  /** The allocation's match (404 when it no longer exists). */
  async loadMatch(
    manager: EntityManager,
    allocation: AllocationRecord,
    options: { forUpdate?: boolean } = {},
  ): Promise<MatchSnapshot> {
    const match = await this.matches.load(manager, allocation.matchId, options);
    if (!match)
      throw new CodedError(ErrorCode.NOT_FOUND, `Match ${allocation.matchId} no longer exists`);
    return match;
  }
}
