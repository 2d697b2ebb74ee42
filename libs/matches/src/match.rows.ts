import {
  isMatchEndReason,
  type DomainEvent,
  type LiveMatchState,
  type MatchParticipant,
  type NewMatch,
  type MatchSnapshot,
  type MatchState,
} from '@matchplane/domain';
import type { EntityManager } from 'typeorm';
import { CodedError, LibraryErrorCode } from '@matchplane/errors';
import { envelopesFor, type OutboxWriter } from '@matchplane/outbox';

/** How a match is stored: its row, the store's errors, and the claim of a stuck match. */

/** The match moved on since the caller read it; nothing was written. */
export class StaleMatchRevisionError extends CodedError<
  typeof LibraryErrorCode.STALE_MATCH_REVISION
> {
  constructor(
    readonly matchId: string,
    readonly expectedRevision: number,
  ) {
    super(
      LibraryErrorCode.STALE_MATCH_REVISION,
      `match ${matchId} is no longer at revision ${expectedRevision}`,
    );
    this.name = 'StaleMatchRevisionError';
  }
}

/**
 * One statement that moves the match on by one revision: its row's revision + 1 under `WHERE
 * revision = $2` (`$1` its id, `$3` now, the first of `parameters`), `companion` (a CTE on the
 * match's own rows, written `name AS (... WHERE ... EXISTS (SELECT 1 FROM changed))`) and
 * `events`, both only when the revision moved. A concurrent writer's win is a
 * {@link StaleMatchRevisionError} and nothing is written. The caller wakes the relay.
 */
export async function writeNextMatchRevision(
  manager: EntityManager,
  outbox: OutboxWriter,
  match: Pick<MatchSnapshot, 'id' | 'revision'>,
  step: {
    readonly parameters: readonly unknown[];
    readonly companion: string;
    readonly events: readonly DomainEvent[];
  },
): Promise<void> {
  const events = outbox.appendSql(envelopesFor(step.events), step.parameters, 'changed');
  const rows = await manager.query<{ revision: string }[]>(
    `WITH changed AS (
       UPDATE matches SET revision = revision + 1, updated_at = $3
        WHERE id = $1 AND revision = $2
        RETURNING revision
     ), ${step.companion}, appended AS (${events.sql})
     SELECT revision FROM changed`,
    [...step.parameters, ...events.parameters],
  );
  if (rows.length !== 1) throw new StaleMatchRevisionError(match.id, match.revision);
}

export class MatchNotFoundError extends CodedError<typeof LibraryErrorCode.MATCH_NOT_FOUND> {
  constructor(readonly matchId: string) {
    super(LibraryErrorCode.MATCH_NOT_FOUND, `match ${matchId} does not exist`);
    this.name = 'MatchNotFoundError';
  }
}

export interface NewParticipant extends MatchParticipant {
  /** The player's rating when matched, kept for the rating update after the result. */
  rating: number;
}

/** What MatchStore.create writes: a new match (its id generated unless given) and its roster. */
export type NewMatchInput = Omit<NewMatch, 'id' | 'participants'> & {
  id?: string;
  participants: NewParticipant[];
  /** False: its result changes no rating (an unranked lobby's match). Default true. */
  rated?: boolean;
  /** The rule set version that formed it (the matcher's); none for a lobby's match. */
  ruleSetVersion?: number;
};

export interface MatchRow {
  id: string;
  mode: string;
  region: string;
  server_region: string | null;
  state: MatchState;
  revision: string;
  failure_reason: string | null;
  state_changed_at: Date;
}

/** A {@link MatchRow} read with its roster (one statement, one snapshot). */
export function toMatchSnapshot(
  row: MatchRow & { participants: MatchParticipant[] },
): MatchSnapshot {
  return {
    id: row.id,
    mode: row.mode,
    region: row.region,
    ...(row.server_region !== null ? { serverRegion: row.server_region } : {}),
    state: row.state,
    revision: Number(row.revision),
    participants: row.participants,
    ...(isMatchEndReason(row.failure_reason) ? { failureReason: row.failure_reason } : {}),
    stateChangedAt: row.state_changed_at,
  };
}

/**
 * What decides a stuck match's verdict, as a boolean over the claimed match row `m`: nothing
 * (`none`); whether someone's initial connect was recorded; whether a server was allocated for it
 * (libs/allocation's `live_allocations` view: the allocation module's fact, read through its
 * read model).
 */
export const STUCK_MATCH_FACTS = {
  none: 'true',
  someone_connected: `EXISTS (SELECT 1 FROM match_participants p WHERE p.match_id = m.id AND p.connected_at IS NOT NULL)`,
  server_allocated: `EXISTS (SELECT 1 FROM live_allocations l WHERE l.match_id = m.id AND l.allocated)`,
} as const;

export type StuckMatchFact = keyof typeof STUCK_MATCH_FACTS;

/**
 * Claims the longest-stuck match in `state` on matches_live_state_idx (state, state_changed_at);
 * the state is a literal so the partial index's predicate is provably implied; `fact` decides the
 * verdict ({@link STUCK_MATCH_FACTS}). `$1` = the cutoff,
 * `$2` = ids to leave alone. SKIP LOCKED: a match another replica (or a live writer) holds is not
 * waited for, and re-checked under the lock if it moved.
 */
export function stuckMatchSql(state: LiveMatchState, fact: StuckMatchFact): string {
  return `SELECT m.id, m.revision, ${STUCK_MATCH_FACTS[fact]} AS fact
  FROM matches m
 WHERE m.state = '${state}'
   AND m.state_changed_at < $1::timestamptz
   AND m.id <> ALL ($2::uuid[])
 ORDER BY m.state_changed_at
 LIMIT 1
   FOR UPDATE OF m SKIP LOCKED`;
}

/** {@link stuckMatchSql}: the claimed match's id, revision and fact, or undefined. */
export async function lockStuckMatch(
  manager: EntityManager,
  state: LiveMatchState,
  fact: StuckMatchFact,
  cutoff: Date,
  skip: readonly string[],
): Promise<{ id: string; revision: number; fact: boolean } | undefined> {
  const [row] = await manager.query<{ id: string; revision: string; fact: boolean }[]>(
    stuckMatchSql(state, fact),
    [cutoff, skip],
  );
  return row ? { id: row.id, revision: Number(row.revision), fact: row.fact } : undefined;
}
