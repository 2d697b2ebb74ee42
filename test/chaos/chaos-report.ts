import type { Client } from 'pg';
import type { PlayerFeed } from './journey-load';

/*
 * The run's figures from real data: the match events committed in the chaos PostgreSQL (outbox
 * rows, each naming the players it concerns) against what each player's SDK subscription
 * actually delivered, and the matches and tickets left behind.
 */

export interface FaultWindow {
  readonly fault: string;
  /** Epoch ms of the kill. */
  readonly at: number;
  /** Epoch ms the next fault starts (or the load ended). */
  readonly until: number;
}

export interface DeliveryFigures {
  /** (event, participant) pairs committed for players with a live subscription. */
  expected: number;
  delivered: number;
  /** Committed and never delivered (nor superseded by a resync). */
  lost: number;
  /** Jumped over by a resync (the client got the state, not each event). */
  resynced: number;
  duplicates: number;
  orderViolations: number;
  /** Per fault: the longest commit-to-delivery wait of an event whose wait overlapped the window. */
  stallMsByFault: { fault: string; longestStallMs: number; events: number }[];
  /** The same before the first fault. */
  baselineStallMs: number;
  /** A sample of lost pairs, for the log. */
  lostSample: string[];
  outboxByStatus: Record<string, number>;
}

interface OutboxRow {
  event: string;
  to_state: string | null;
  aggregate_id: string;
  revision: string;
  player_ids: string[];
  created_ms: string;
}

export async function deliveryFigures(
  db: Client,
  feeds: readonly PlayerFeed[],
  faults: readonly FaultWindow[],
  firstFaultAt: number,
): Promise<DeliveryFigures> {
  const byPlayer = new Map(feeds.map((feed) => [feed.playerId, feed]));
  const { rows } = await db.query<OutboxRow>(
    `SELECT event, payload->>'to' AS to_state, aggregate_id, revision,
            player_ids::text[] AS player_ids,
            (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
       FROM outbox WHERE aggregate_type = 'match'`,
  );
  const stalls = faults.map((window) => ({ window, longest: 0, events: 0 }));
  let baseline = 0;
  const figures = {
    expected: 0,
    delivered: 0,
    lost: 0,
    resynced: 0,
    lostSample: [] as string[],
  };
  for (const row of rows) {
    const revision = Number(row.revision);
    const committedAt = Number(row.created_ms);
    for (const playerId of row.player_ids) {
      const feed = byPlayer.get(playerId);
      if (!feed) continue;
      figures.expected += 1;
      const arrivedAt = feed.arrivals.get(row.aggregate_id)?.get(revision);
      if (arrivedAt === undefined) {
        if ((feed.resyncedTo.get(row.aggregate_id) ?? 0) >= revision) figures.resynced += 1;
        else {
          figures.lost += 1;
          if (figures.lostSample.length < 20)
            figures.lostSample.push(lostLine(row, playerId, feed));
        }
        continue;
      }
      figures.delivered += 1;
      const waited = Math.max(0, arrivedAt - committedAt);
      if (arrivedAt < firstFaultAt) baseline = Math.max(baseline, waited);
      for (const stall of stalls) {
        if (committedAt < stall.window.until && arrivedAt >= stall.window.at) {
          stall.longest = Math.max(stall.longest, waited);
          stall.events += 1;
        }
      }
    }
  }
  const { rows: statuses } = await db.query<{ status: string; count: string }>(
    `SELECT status, count(*) AS count FROM outbox GROUP BY status`,
  );
  return {
    ...figures,
    duplicates: feeds.reduce((sum, feed) => sum + feed.duplicates, 0),
    orderViolations: feeds.reduce((sum, feed) => sum + feed.orderViolations, 0),
    stallMsByFault: stalls.map((stall) => ({
      fault: stall.window.fault,
      longestStallMs: stall.longest,
      events: stall.events,
    })),
    baselineStallMs: baseline,
    outboxByStatus: Object.fromEntries(statuses.map((row) => [row.status, Number(row.count)])),
  };
}

/** A lost pair for the log: what the event was, when it committed, where the feed stood. */
function lostLine(row: OutboxRow, playerId: string, feed: PlayerFeed): string {
  const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);
  const event = `${row.event}${row.to_state ? ` to ${row.to_state}` : ''}`;
  const closed = feed.closedAt === undefined ? 'open' : `closed at ${clock(feed.closedAt)}`;
  return (
    `${row.aggregate_id} rev ${row.revision} (${event}, committed at ${clock(Number(row.created_ms))}) ` +
    `-> player ${playerId} (subscription ${closed}, at rev ${feed.lastRevision(row.aggregate_id)} of this match)`
  );
}

/**
 * Per fault: the longest time in its window during which nothing at all was committed to the
 * outbox (from the kill to the first commit, or between two commits). The stall above is blind
 * to what could not be committed (no primary, no matcher holding a shard); this is not. Under
 * steady load commits are a few hundred ms apart (the baseline, before the first fault).
 */
export async function commitGaps(
  db: Client,
  faults: readonly FaultWindow[],
  loadStartedAt: number,
): Promise<{ gapMsByFault: Record<string, number>; baselineGapMs: number }> {
  const { rows } = await db.query<{ created_ms: string }>(
    `SELECT (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
       FROM outbox ORDER BY created_at`,
  );
  const commits = rows.map((row) => Number(row.created_ms));
  const longestGap = (from: number, until: number) => {
    let previous = from;
    let longest = 0;
    for (const at of commits) {
      if (at < from) continue;
      if (at > until) break;
      longest = Math.max(longest, at - previous);
      previous = at;
    }
    return Math.max(longest, until - previous);
  };
  return {
    gapMsByFault: Object.fromEntries(
      faults.map((window) => [window.fault, longestGap(window.at, window.until)]),
    ),
    baselineGapMs: longestGap(loadStartedAt, faults[0]?.at ?? loadStartedAt),
  };
}

const LIVE_MATCH = `state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`;
const LIVE_TICKET = `state IN ('SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED')`;

export interface Leftovers {
  liveMatches: number;
  liveTickets: number;
}

export async function leftovers(db: Client): Promise<Leftovers> {
  const { rows } = await db.query<{ matches: string; tickets: string }>(
    `SELECT (SELECT count(*) FROM matches WHERE ${LIVE_MATCH}) AS matches,
            (SELECT count(*) FROM queue_tickets WHERE ${LIVE_TICKET}) AS tickets`,
  );
  return { liveMatches: Number(rows[0]!.matches), liveTickets: Number(rows[0]!.tickets) };
}

export interface Stranded {
  matches: number;
  tickets: number;
  /** A sample, for the log: id, state, revision. */
  sample: string[];
}

/**
 * Matches not in a terminal state whose revision did not move during `watchMs`, and tickets not
 * in a terminal state that did not change either (both compared by their rows' content).
 */
export async function stranded(db: Client, watchMs: number): Promise<Stranded> {
  const snapshot = async () => {
    const matches = await db.query<{ id: string; state: string; revision: string }>(
      `SELECT id, state, revision FROM matches WHERE ${LIVE_MATCH}`,
    );
    const tickets = await db.query<{ id: string; state: string }>(
      `SELECT id, state FROM queue_tickets WHERE ${LIVE_TICKET}`,
    );
    return {
      matches: new Map(matches.rows.map((row) => [row.id, `${row.state}@${row.revision}`])),
      tickets: new Map(tickets.rows.map((row) => [row.id, row.state])),
    };
  };
  const before = await snapshot();
  await new Promise((resolve) => setTimeout(resolve, watchMs));
  const after = await snapshot();
  const sample: string[] = [];
  let matches = 0;
  for (const [id, state] of after.matches) {
    if (before.matches.get(id) !== state) continue;
    matches += 1;
    if (sample.length < 10) sample.push(`match ${id} ${state}`);
  }
  let tickets = 0;
  for (const [id, state] of after.tickets) {
    if (before.tickets.get(id) !== state) continue;
    tickets += 1;
    if (sample.length < 20) sample.push(`ticket ${id} ${state}`);
  }
  return { matches, tickets, sample };
}
