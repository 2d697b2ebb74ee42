import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  runInTransaction,
  sendWithNext,
  sqlStateOf,
  type BatchOutcome,
  type TransactionOptions,
  type UnitOfWork,
} from '@matchplane/persistence';

/** PostgreSQL's lock_not_available: a lock waited for past lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

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

/**
 * Answers the requests of a batch whose keys were new, one outcome each, in order; it must write
 * nothing for a request it answers with an error. `unit`: the transaction, for stores that take it.
 */
export type BatchWork<T> = (
  manager: EntityManager,
  claimed: readonly IdempotentRequest[],
  unit: UnitOfWork,
) => Promise<readonly BatchOutcome<IdempotentResponse<T>>[]>;

/** One string per (player, key): what a key row is unique on. */
export function idempotencyKeyId(request: Pick<IdempotentRequest, 'playerId' | 'key'>): string {
  return `${request.playerId}\n${request.key}`;
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
    work: (manager: EntityManager, unit: UnitOfWork) => Promise<IdempotentResponse<T>>,
  ): Promise<IdempotentOutcome<T>> {
    const fingerprint = requestFingerprint(request.route, request.input);
    try {
      return await runInTransaction(this.dataSource, async (manager, unit) => {
        const claimed = await manager.query<unknown[]>(
          `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state)
           VALUES ($1, $2, $3, $4, 'in_progress')
           ON CONFLICT (player_id, key) DO NOTHING
           RETURNING 1`,
          [request.playerId, request.key, fingerprint, request.route],
        );
        if (claimed.length === 0) return this.replay<T>(manager, request, fingerprint);
        const response = await work(manager, unit);
        // The transaction's last write: it goes to PostgreSQL with the COMMIT.
        await sendWithNext(
          manager,
          `UPDATE idempotency_keys
              SET state = 'completed', response_status = $3, response_body = $4::jsonb, completed_at = clock_timestamp()
            WHERE player_id = $1 AND key = $2`,
          [request.playerId, request.key, response.status, JSON.stringify(response.body ?? null)],
        );
        return { ...response, replayed: false };
      });
    } catch (error) {
      throw keyStillHeld(error, request);
    }
  }

  /**
   * {@link execute} for many requests in one transaction. A first attempt assumes every key new
   * (see {@link executeAsNew}); if that is not so, the keys are claimed in one statement, `work`
   * runs once for all the requests whose key was new and answers each of them, and the answers
   * are stored in one statement. Each request gets its own outcome: a replay, a refusal
   * (key reused, still held), `work`'s answer or `work`'s error for it. An error answer releases
   * that request's key, as a failed {@link execute} would, so `work` must write nothing for a
   * request it refuses. If the transaction fails as a whole (a key another transaction holds past
   * lock_timeout, a constraint), every request runs again alone, so one request's fault is never
   * its neighbours'. A (player, key) pair repeated in `requests` runs after its first occurrence
   * has committed, so it replays that answer. `options.synchronousCommit` is
   * runInTransaction's: false only where losing the batch to a crash of PostgreSQL is harmless
   * (its answers are forgotten with it, so a retry runs it again).
   */
  async executeMany<T>(
    requests: readonly IdempotentRequest[],
    work: BatchWork<T>,
    options: Pick<TransactionOptions, 'synchronousCommit'> = {},
  ): Promise<BatchOutcome<IdempotentOutcome<T>>[]> {
    const seen = new Set<string>();
    const repeats = new Set<number>();
    requests.forEach((request, index) => {
      const id = idempotencyKeyId(request);
      if (seen.has(id)) repeats.add(index);
      seen.add(id);
    });
    if (repeats.size > 0) {
      const split = (repeated: boolean) =>
        requests.filter((_, index) => repeats.has(index) === repeated);
      const firsts = await this.executeMany(split(false), work, options);
      const thens = await this.executeMany(split(true), work, options);
      return requests.map(
        (_, index) =>
          (repeats.has(index) ? thens.shift() : firsts.shift()) as BatchOutcome<
            IdempotentOutcome<T>
          >,
      );
    }
    const fingerprints = requests.map((request) =>
      requestFingerprint(request.route, request.input),
    );
    try {
      return await runInTransaction(
        this.dataSource,
        (manager, unit) => this.executeAsNew(unit, requests, fingerprints, work),
        options,
      );
    } catch (error) {
      // A lock waited for past lock_timeout (a key or a ticket another transaction holds): the
      // careful path would wait for it once more, so the requests go straight to running alone.
      if (sqlStateOf(error) === LOCK_NOT_AVAILABLE) {
        return this.eachAlone(requests, work, error, options);
      }
      // A key that exists (a replay), a request `work` refused, or any other failure: nothing
      // was kept, and the batch runs again claiming its keys first, which tells those apart.
    }
    try {
      return await runInTransaction(
        this.dataSource,
        (manager, unit) => this.executeBatch(unit, requests, fingerprints, work),
        options,
      );
    } catch (error) {
      return this.eachAlone(requests, work, error, options);
    }
  }

  /**
   * After a batch failed as a whole: every request runs again alone, so one request's fault is
   * never its neighbours'. A lone request's failure is its own answer.
   */
  private eachAlone<T>(
    requests: readonly IdempotentRequest[],
    work: BatchWork<T>,
    error: unknown,
    options: Pick<TransactionOptions, 'synchronousCommit'>,
  ): Promise<BatchOutcome<IdempotentOutcome<T>>[]> {
    const [only] = requests;
    if (requests.length === 1 && only) {
      return Promise.resolve([{ error: keyStillHeld(error, only) }]);
    }
    return Promise.all(
      requests.map(async (request) => {
        const [outcome] = await this.executeMany([request], work, options);
        return outcome as BatchOutcome<IdempotentOutcome<T>>;
      }),
    );
  }

  /**
   * The common case in one round trip fewer: every key is new and `work` accepts every request.
   * `work` runs first and the keys are inserted already completed, with their answers, in the
   * transaction's last write: one row version per key instead of a claim and its completion. A
   * key that exists fails that insert (unique violation, after the key's own transaction ended
   * if it is still open), and a refusal is thrown here; either way the transaction keeps nothing.
   */
  private async executeAsNew<T>(
    unit: UnitOfWork,
    requests: readonly IdempotentRequest[],
    fingerprints: readonly Buffer[],
    work: BatchWork<T>,
  ): Promise<BatchOutcome<IdempotentOutcome<T>>[]> {
    const answers = await work(unit.manager, requests, unit);
    const responses = answers.flatMap((answer) => ('value' in answer ? [answer.value] : []));
    if (responses.length !== requests.length) {
      // A refusal must not answer a replay, whose stored response it would hide.
      throw new Error(`work refused ${requests.length - responses.length} of ${requests.length}`);
    }
    // The batch's last write: it goes to PostgreSQL with the COMMIT.
    await sendWithNext(
      unit.manager,
      `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, response_status, response_body, completed_at)
       SELECT r.player_id, r.key, r.request_hash, r.route, 'completed', r.status, r.body, clock_timestamp()
         FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::text[], $5::int[], $6::jsonb[])
              AS r(player_id, key, request_hash, route, status, body)
        ORDER BY r.player_id, r.key`,
      [
        requests.map((request) => request.playerId),
        requests.map((request) => request.key),
        fingerprints,
        requests.map((request) => request.route),
        responses.map((response) => response.status),
        responses.map((response) => JSON.stringify(response.body ?? null)),
      ],
    );
    return responses.map((response) => ({ value: { ...response, replayed: false } }));
  }

  /** {@link executeMany}'s careful path: the keys claimed first, so replays and refusals are told apart. */
  private async executeBatch<T>(
    unit: UnitOfWork,
    requests: readonly IdempotentRequest[],
    fingerprints: readonly Buffer[],
    work: BatchWork<T>,
  ): Promise<BatchOutcome<IdempotentOutcome<T>>[]> {
    const claimedRows = await unit.manager.query<{ player_id: string; key: string }[]>(
      `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state)
       SELECT r.player_id, r.key, r.request_hash, r.route, 'in_progress'
         FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::text[]) AS r(player_id, key, request_hash, route)
        ORDER BY r.player_id, r.key
       ON CONFLICT (player_id, key) DO NOTHING
       RETURNING player_id, key`,
      [
        requests.map((request) => request.playerId),
        requests.map((request) => request.key),
        fingerprints,
        requests.map((request) => request.route),
      ],
    );
    const claimedKeys = new Set(
      claimedRows.map((row) => idempotencyKeyId({ playerId: row.player_id, key: row.key })),
    );
    const claimed = new Set(
      requests.flatMap((request, index) =>
        claimedKeys.has(idempotencyKeyId(request)) ? [index] : [],
      ),
    );
    const outcomes: BatchOutcome<IdempotentOutcome<T>>[] = [];
    for (const [index, request] of requests.entries()) {
      if (claimed.has(index)) continue;
      // A replay, rare: its own statement (a fresh snapshot sees the key's committed answer).
      try {
        outcomes[index] = {
          value: await this.replay<T>(unit.manager, request, fingerprints[index] as Buffer),
        };
      } catch (error) {
        outcomes[index] = { error };
      }
    }
    const mine = [...claimed].sort((a, b) => a - b);
    const answers =
      mine.length > 0
        ? await work(
            unit.manager,
            mine.map((i) => requests[i] as IdempotentRequest),
            unit,
          )
        : [];
    if (answers.length !== mine.length) {
      throw new Error(`work answered ${answers.length} of ${mine.length} requests`);
    }
    const completed: { request: IdempotentRequest; response: IdempotentResponse<T> }[] = [];
    const released: IdempotentRequest[] = [];
    mine.forEach((index, position) => {
      const request = requests[index] as IdempotentRequest;
      const answer = answers[position] as BatchOutcome<IdempotentResponse<T>>;
      if ('error' in answer) {
        released.push(request);
        outcomes[index] = answer;
      } else {
        completed.push({ request, response: answer.value });
        outcomes[index] = { value: { ...answer.value, replayed: false } };
      }
    });
    await this.finish(unit.manager, completed, released);
    return outcomes;
  }

  /** Stores the answers of completed requests and drops the keys of refused ones, in one statement. */
  private async finish<T>(
    manager: EntityManager,
    completed: readonly { request: IdempotentRequest; response: IdempotentResponse<T> }[],
    released: readonly IdempotentRequest[],
  ): Promise<void> {
    if (completed.length === 0 && released.length === 0) return;
    // The batch's last write: it goes to PostgreSQL with the COMMIT.
    await sendWithNext(
      manager,
      `WITH completed AS (
         UPDATE idempotency_keys k
            SET state = 'completed', response_status = c.status, response_body = c.body, completed_at = clock_timestamp()
           FROM unnest($1::uuid[], $2::text[], $3::int[], $4::jsonb[]) AS c(player_id, key, status, body)
          WHERE k.player_id = c.player_id AND k.key = c.key
       )
       DELETE FROM idempotency_keys k
        USING unnest($5::uuid[], $6::text[]) AS r(player_id, key)
        WHERE k.player_id = r.player_id AND k.key = r.key`,
      [
        completed.map(({ request }) => request.playerId),
        completed.map(({ request }) => request.key),
        completed.map(({ response }) => response.status),
        completed.map(({ response }) => JSON.stringify(response.body ?? null)),
        released.map((request) => request.playerId),
        released.map((request) => request.key),
      ],
    );
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
      throw new CodedError(
        ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
        `Idempotency-Key "${request.key}" is in use; retry later`,
      );
    }
    if (row.route !== request.route || !row.request_hash.equals(fingerprint)) {
      throw new CodedError(
        ErrorCode.IDEMPOTENCY_KEY_REUSED,
        `Idempotency-Key "${request.key}" was already used for a different request (${row.route}); use a new key`,
      );
    }
    return { status: row.response_status, body: row.response_body, replayed: true };
  }
}

/** A wait for another transaction's key past lock_timeout is the client's 409; anything else is itself. */
function keyStillHeld(error: unknown, request: IdempotentRequest): unknown {
  if (sqlStateOf(error) !== LOCK_NOT_AVAILABLE) return error;
  return new CodedError(
    ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS,
    `A request with Idempotency-Key "${request.key}" is still in progress; retry later`,
    { retryAfterSeconds: 1 },
  );
}
