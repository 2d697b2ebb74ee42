import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { returnedRows } from '@matchplane/persistence';
import { OUTBOX_COLUMN_NAMES, type OutboxRow } from './outbox.row';

/** What a claiming statement stamps on the rows it claims. */
export interface ClaimStamp {
  /** Fresh per statement (a uuid): the fence every later ack or failure of those rows names. */
  token: string;
  /** The claiming dispatcher process (its outbox_dispatchers id). */
  owner: string;
}

/** When a claim stops protecting its row. */
export interface ClaimLiveness {
  /** A claim older than this is abandoned whatever its owner (the last-resort backstop). */
  leaseMs: number;
  /** A claim whose owner has not beaten its heartbeat for this long is abandoned. */
  ownerTimeoutMs: number;
}

/** A row as a claiming statement returned it: claimed by us, under `claim_token`. */
export interface ClaimedRow extends OutboxRow {
  claimed_at: Date;
  claim_token: string;
  claimed_by: string;
}

/** A claimed row taken from another owner (dead, or past the lease) rather than from nobody. */
export interface HeadClaim extends ClaimedRow {
  previous_owner: string | null;
}

/** How handing one claimed row to its subscribers went, for {@link OutboxRepository.settle}. */
export type DeliveryResult =
  | { id: string; token: string; delivered: true }
  | {
      id: string;
      token: string;
      delivered: false;
      error: string;
      /** Dead-letter now instead of after `maxAttempts` (a PermanentDeliveryError). */
      permanent: boolean;
      retryDelayMs: number;
    };

export interface FailureOutcome {
  id: string;
  attempts: number;
  deadLettered: boolean;
}

export interface Settlement {
  /** Acked: status published. */
  published: string[];
  failed: FailureOutcome[];
  /** Not settled: the claim was no longer the one named (taken over) or the row no longer pending. */
  refused: string[];
  /** The next due row of each aggregate that moved on (acked, or its head dead-lettered), claimed. */
  successors: ClaimedRow[];
}

/**
 * Appended to the WHERE of each write the dispatcher makes, so that a statement that writes a row
 * has run it: its own transaction then commits without waiting for the WAL flush (is_local: the
 * setting ends with that transaction; the writers' commits stay synchronous). A crash of
 * PostgreSQL can lose only the newest of these commits, never the events (the writers'
 * commits), so the worst outcome is a redelivery in order, which consumers dedupe on
 * (aggregate id, revision). See docs/architecture/delivery.md.
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) IS NOT NULL`;

const secondsOf = (param: string) => `make_interval(secs => ${param} / 1000.0)`;

/**
 * Whether the claim on `row` still protects it from the claimer `self`: a token, within the
 * lease, and an owner whose heartbeat is recent, or the claimer itself (it holds its own claims
 * and renews them if its heartbeat lapsed, so taking them from itself would only redeliver).
 * The arguments name the statement's parameters.
 */
function liveClaim(row: string, lease: string, ownerTimeout: string, self: string): string {
  return `(${row}.claim_token IS NOT NULL
      AND ${row}.claimed_at >= now() - ${secondsOf(lease)}
      AND (${row}.claimed_by = ${self}
           OR EXISTS (SELECT 1 FROM outbox_dispatchers d
                       WHERE d.id = ${row}.claimed_by AND d.heartbeat_at >= now() - ${secondsOf(ownerTimeout)})))`;
}

function prefixed(alias: string): string {
  return OUTBOX_COLUMN_NAMES.map((column) => `${alias}.${column}`).join(', ');
}

/**
 * Claims up to $1 due aggregate heads with token $2 for owner $3. A head is claimable when no row
 * of its aggregate has a live claim: a dead owner's claims are taken over here, with a fresh
 * token, as soon as its heartbeat is $5 ms old; the lease $4 is the backstop.
 */
export const CLAIM_HEADS_SQL = `
  WITH heads AS (
    -- Only the oldest pending revision of an aggregate can be claimed (index outbox_pending_head).
    SELECT DISTINCT ON (aggregate_id) id, aggregate_id, next_attempt_at
      FROM outbox
     WHERE status = 'pending'
     ORDER BY aggregate_id, revision
  ), due AS (
    SELECT id FROM heads
     WHERE next_attempt_at <= now()
       -- A replayed dead letter can sit below a row already in flight: never two at once.
       AND NOT EXISTS (
         SELECT 1 FROM outbox live
          WHERE live.aggregate_id = heads.aggregate_id AND live.status = 'pending'
            AND ${liveClaim('live', '$4', '$5', '$3')})
     ORDER BY next_attempt_at
     LIMIT $1
  ), locked AS (
    -- Re-checked under the row lock: another relay may have claimed or settled it since.
    SELECT o.id, o.claimed_by AS previous_owner
      FROM outbox o JOIN due USING (id)
     WHERE o.status = 'pending' AND NOT ${liveClaim('o', '$4', '$5', '$3')}
       FOR UPDATE OF o SKIP LOCKED
  ), claimed AS (
    -- By primary key whatever the planner thinks of the table's size (an outbox of nothing but
    -- pending rows would otherwise be hash-joined by a sequential scan).
    UPDATE outbox o SET claimed_at = clock_timestamp(), claim_token = $2, claimed_by = $3
     WHERE o.id = ANY (ARRAY(SELECT id FROM locked)) AND ${ASYNC_COMMIT}
    RETURNING ${prefixed('o')}
  )
  SELECT claimed.*, locked.previous_owner FROM claimed JOIN locked USING (id)`;

const SETTLED_SUMMARY = ['id', 'attempts', 'status'];

/** The columns of a settle result row: everything for a claimed successor, a summary otherwise. */
function settledColumns(alias: string, full: boolean): string {
  return OUTBOX_COLUMN_NAMES.map((column) =>
    full || SETTLED_SUMMARY.includes(column) ? `${alias}.${column}` : 'NULL',
  ).join(', ');
}

/** The rows of `result` delivered: published, their claims released. */
function ackedCte(onlyWhere: string): string {
  return `acked AS (
    UPDATE outbox o
       SET status = 'published', published_at = clock_timestamp(),
           claimed_at = NULL, claim_token = NULL, claimed_by = NULL
      FROM result r
     WHERE o.id = ANY ($1::bigint[]) AND o.id = r.id AND o.claim_token = r.token AND o.status = 'pending'${onlyWhere}
       AND ${ASYNC_COMMIT}
    RETURNING o.id, o.aggregate_id, o.attempts, o.status
  )`;
}

/**
 * The next due row of each aggregate in `moved_on`, claimed with token `token` for `owner` (none
 * when the token is NULL: a dispatcher shutting down).
 */
function successorCtes(token: string, owner: string): string {
  return `successor AS (
    SELECT next.id
      FROM moved_on
     CROSS JOIN LATERAL (
       SELECT o.id, o.next_attempt_at, o.claim_token
         FROM outbox o
        WHERE o.aggregate_id = moved_on.aggregate_id AND o.status = 'pending' AND o.id <> ALL ($1::bigint[])
        ORDER BY o.revision
        LIMIT 1
     ) next
     WHERE next.next_attempt_at <= now() AND next.claim_token IS NULL AND ${token}::uuid IS NOT NULL
  ), locked AS (
    SELECT o.id FROM outbox o JOIN successor USING (id)
     WHERE o.status = 'pending' AND o.claim_token IS NULL
       FOR UPDATE OF o SKIP LOCKED
  ), claimed AS (
    UPDATE outbox o SET claimed_at = clock_timestamp(), claim_token = ${token}, claimed_by = ${owner}
     WHERE o.id = ANY (ARRAY(SELECT id FROM locked)) AND ${ASYNC_COMMIT}
    RETURNING ${prefixed('o')}
  )`;
}

/**
 * Settles a batch of delivered rows and claims what comes next, in one statement. Input arrays
 * ($1 ids, $2 claim tokens, $3 errors (NULL = delivered), $4 permanent, $5 retry delays in ms);
 * $6 max attempts; the successors are claimed with token $7 for owner $8 (none when $7 is NULL:
 * a dispatcher shutting down).
 *
 * Every update names the row's claim token: a row claimed again since (taken over after its
 * owner was presumed dead) is left alone, and so is its aggregate. (`o.id = ANY ($1)` beside the
 * join keeps the updates on the primary key however small the planner believes the table.) The successor lookup runs on
 * the statement's snapshot, in which the settled rows are still pending: hence `<> ALL($1)`.
 */
export const SETTLE_SQL = `
  WITH result AS (
    SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::boolean[], $5::float8[])
      AS r(id, token, error, permanent, retry_ms)
  ), ${ackedCte(' AND r.error IS NULL')}, failed AS (
    UPDATE outbox o
       SET attempts = o.attempts + 1,
           last_error = r.error,
           claimed_at = NULL, claim_token = NULL, claimed_by = NULL,
           status = CASE WHEN r.permanent OR o.attempts + 1 >= $6 THEN 'dead' ELSE 'pending' END,
           dead_lettered_at = CASE WHEN r.permanent OR o.attempts + 1 >= $6 THEN clock_timestamp() END,
           next_attempt_at = clock_timestamp() + ${secondsOf('r.retry_ms')}
      FROM result r
     WHERE o.id = ANY ($1::bigint[]) AND o.id = r.id AND o.claim_token = r.token AND o.status = 'pending' AND r.error IS NOT NULL
       AND ${ASYNC_COMMIT}
    RETURNING o.id, o.aggregate_id, o.attempts, o.status, r.error
  ), history AS (
    INSERT INTO outbox_delivery_attempts (outbox_id, attempt, error)
    SELECT id, attempts, error FROM failed
  ), moved_on AS (
    SELECT aggregate_id FROM acked
    UNION
    SELECT aggregate_id FROM failed WHERE status = 'dead'
  ), ${successorCtes('$7', '$8')}
  SELECT 'claimed' AS settled, ${settledColumns('claimed', true)} FROM claimed
  UNION ALL
  SELECT 'published', ${settledColumns('acked', false)} FROM acked
  UNION ALL
  SELECT 'failed', ${settledColumns('failed', false)} FROM failed`;

/**
 * {@link SETTLE_SQL} for a batch that was all delivered, the usual case: $1 ids, $2 claim tokens,
 * successors claimed with token $3 for owner $4. Without the failure branches PostgreSQL plans it
 * in about half the time, and every execution is planned (see pool-client.ts).
 */
export const SETTLE_DELIVERED_SQL = `
  WITH result AS (
    SELECT * FROM unnest($1::bigint[], $2::uuid[]) AS r(id, token)
  ), ${ackedCte('')}, moved_on AS (
    SELECT aggregate_id FROM acked
  ), ${successorCtes('$3', '$4')}
  SELECT 'claimed' AS settled, ${settledColumns('claimed', true)} FROM claimed
  UNION ALL
  SELECT 'published', ${settledColumns('acked', false)} FROM acked`;

/**
 * Re-stamps claims that are still ours ($1 ids under $2 tokens) with the current time, returning
 * the ids that were; one whose token changed was taken over and is no longer ours to deliver.
 */
export const RENEW_CLAIMS_SQL = `
  UPDATE outbox o SET claimed_at = clock_timestamp()
    FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
   WHERE o.id = c.id AND o.claim_token = c.token AND o.status = 'pending' AND ${ASYNC_COMMIT}
  RETURNING o.id`;

/**
 * The outbox module's door to the `outbox` and `outbox_delivery_attempts` tables for the
 * delivery side. Claims are the ordering gate: only the oldest pending row of an aggregate can
 * be claimed, and only while no claim on it is live, so an aggregate has at most one event in
 * flight and its events leave in revision order. Every claim carries a token, and a settlement
 * is refused for a token that is no longer the row's (fencing).
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  async claimHeads(
    limit: number,
    stamp: ClaimStamp,
    liveness: ClaimLiveness,
  ): Promise<HeadClaim[]> {
    const result: unknown = await this.dataSource.query(CLAIM_HEADS_SQL, [
      limit,
      stamp.token,
      stamp.owner,
      liveness.leaseMs,
      liveness.ownerTimeoutMs,
    ]);
    return returnedRows<HeadClaim>(result);
  }

  /**
   * Acks, counts failures and dead-letters, and claims the successors under `next` (none without
   * it): one statement.
   */
  async settle(
    results: readonly DeliveryResult[],
    next: ClaimStamp | undefined,
    options: { maxAttempts: number },
  ): Promise<Settlement> {
    const ids = results.map((result) => result.id);
    const tokens = results.map((result) => result.token);
    const [sql, parameters] = results.every((result) => result.delivered)
      ? [SETTLE_DELIVERED_SQL, [ids, tokens, next?.token ?? null, next?.owner ?? null]]
      : [
          SETTLE_SQL,
          [
            ids,
            tokens,
            results.map((result) => (result.delivered ? null : result.error.slice(0, 4_000))),
            results.map((result) => !result.delivered && result.permanent),
            results.map((result) => (result.delivered ? 0 : result.retryDelayMs)),
            options.maxAttempts,
            next?.token ?? null,
            next?.owner ?? null,
          ],
        ];
    const rows = await this.dataSource.query<
      (Partial<OutboxRow> & { settled: 'claimed' | 'published' | 'failed'; id: string })[]
    >(sql, parameters);
    const settlement: Settlement = { published: [], failed: [], refused: [], successors: [] };
    const settled = new Set<string>();
    for (const { settled: kind, ...row } of rows) {
      if (kind === 'claimed') {
        settlement.successors.push(row as ClaimedRow);
        continue;
      }
      settled.add(row.id);
      if (kind === 'published') settlement.published.push(row.id);
      else
        settlement.failed.push({
          id: row.id,
          attempts: row.attempts ?? 0,
          deadLettered: row.status === 'dead',
        });
    }
    settlement.refused = results.map((result) => result.id).filter((id) => !settled.has(id));
    return settlement;
  }

  /** The ids among `claims` still claimed under their token, now re-stamped (see RENEW_CLAIMS_SQL). */
  async renewClaims(claims: readonly { id: string; token: string }[]): Promise<string[]> {
    const result: unknown = await this.dataSource.query(RENEW_CLAIMS_SQL, [
      claims.map((claim) => claim.id),
      claims.map((claim) => claim.token),
    ]);
    return returnedRows<{ id: string }>(result).map((row) => row.id);
  }
}
