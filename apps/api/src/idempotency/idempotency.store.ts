import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError, ErrorCode } from '@matchplane/contracts';
import { runInTransaction, sqlStateOf } from '@matchplane/persistence';

export interface IdempotentRequest {
  readonly playerId: string;
  readonly key: string;
  /** Route template, e.g. "POST queue/tickets/:id/heartbeat". */
  readonly route: string;
  /** Path parameters and body: a replay must carry the same. */
  readonly input: unknown;
}

export interface IdempotentResponse<T> {
  readonly status: number;
  readonly body: T;
}

export interface IdempotentOutcome<T> extends IdempotentResponse<T> {
  /** True when this is a stored response of an earlier request (nothing was done now). */
  readonly replayed: boolean;
}

/** Canonical JSON (sorted keys) so that key order does not make a replay look different. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requestFingerprint(route: string, input: unknown): Buffer {
  return createHash('sha256').update(route).update('\n').update(canonical(input)).digest();
}

/**
 * Owns `idempotency_keys`. The key row is inserted first in the same transaction as the mutation
 * and completed with the response before commit, so a mutation and its key commit together (one
 * commit per request). A concurrent request with the same key blocks on the key's unique index
 * until the first commits, then replays its response; past API_LOCK_TIMEOUT_MS (the API sessions'
 * lock_timeout) it answers 409.
 * A request that fails (any error) rolls back with its key: nothing was done, so a retry runs anew.
 */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly dataSource: DataSource) {}

  async execute<T>(
    request: IdempotentRequest,
    work: (manager: EntityManager) => Promise<IdempotentResponse<T>>,
  ): Promise<IdempotentOutcome<T>> {
    const fingerprint = requestFingerprint(request.route, request.input);
    try {
      return await runInTransaction(this.dataSource, async (manager) => {
        const claimed = await manager.query<unknown[]>(
          `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state)
           VALUES ($1, $2, $3, $4, 'in_progress')
           ON CONFLICT (player_id, key) DO NOTHING
           RETURNING 1`,
          [request.playerId, request.key, fingerprint, request.route],
        );
        if (claimed.length === 0) return this.replay<T>(manager, request, fingerprint);
        const response = await work(manager);
        await manager.query(
          `UPDATE idempotency_keys
              SET state = 'completed', response_status = $3, response_body = $4::jsonb, completed_at = clock_timestamp()
            WHERE player_id = $1 AND key = $2`,
          [request.playerId, request.key, response.status, JSON.stringify(response.body ?? null)],
        );
        return { ...response, replayed: false };
      });
    } catch (error) {
      if (sqlStateOf(error) === '55P03') {
        throw new ApiError(
          409,
          ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
          `A request with Idempotency-Key "${request.key}" is still in progress; retry later`,
          { headers: { 'retry-after': '1' } },
        );
      }
      throw error;
    }
  }

  private async replay<T>(
    manager: EntityManager,
    request: IdempotentRequest,
    fingerprint: Buffer,
  ): Promise<IdempotentOutcome<T>> {
    const rows = await manager.query<
      {
        request_hash: Buffer;
        route: string;
        state: string;
        response_status: number | null;
        response_body: T;
      }[]
    >(
      `SELECT request_hash, route, state, response_status, response_body FROM idempotency_keys
        WHERE player_id = $1 AND key = $2`,
      [request.playerId, request.key],
    );
    const row = rows[0];
    if (!row || row.state !== 'completed' || row.response_status === null) {
      // Only possible if the row was removed or is being written outside this protocol.
      throw new ApiError(
        409,
        ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
        `Idempotency-Key "${request.key}" is in use; retry later`,
      );
    }
    if (row.route !== request.route || !row.request_hash.equals(fingerprint)) {
      throw new ApiError(
        422,
        ErrorCode.IDEMPOTENCY_KEY_REUSED,
        `Idempotency-Key "${request.key}" was already used for a different request (${row.route}); use a new key`,
      );
    }
    return { status: row.response_status, body: row.response_body, replayed: true };
  }
}
