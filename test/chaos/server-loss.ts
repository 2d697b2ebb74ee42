import type { Client } from 'pg';
import { sleep } from '../bench/bench.processes';
import { percentiles, type Percentiles } from '../bench/delivery.recorder';

/** One game server the run SIGKILLed mid-match: when, and whose match it served. */
export interface ServerKill {
  readonly at: number;
  readonly matchId: string;
  readonly playerIds: readonly string[];
}

/**
 * SIGKILLs the game server of a match in progress (the local provider's process, its pid in the
 * allocation), waiting up to `timeoutMs` for one to be playing. Undefined when none played then.
 */
export async function killLiveGameServer(
  db: Client,
  timeoutMs: number,
): Promise<ServerKill | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await db.query<{ id: string; pid: number; players: string[] }>(
      `SELECT m.id, (a.provider_ref->>'pid')::int AS pid, array_agg(p.player_id::text) AS players
         FROM matches m
         JOIN allocations a ON a.match_id = m.id
         JOIN match_participants p ON p.match_id = m.id
        WHERE m.state = 'IN_PROGRESS' AND a.provider = 'local' AND a.state = 'ALLOCATED'
        GROUP BY m.id, a.provider_ref
        LIMIT 1`,
    );
    const live = rows[0];
    if (live && Number.isInteger(live.pid)) {
      try {
        process.kill(live.pid, 'SIGKILL');
        return { at: Date.now(), matchId: live.id, playerIds: live.players };
      } catch {
        // Exited meanwhile (its match just ended): look for another.
      }
    }
    await sleep(100);
  }
  return undefined;
}

export interface ServerLossFigures {
  /** Matches whose server was killed. */
  matches: number;
  /** Kill -> each player's next accepted enqueue (ms), over the players who got back in. */
  players_free_ms: Percentiles;
  /** Players of a killed match whose next enqueue was never accepted. */
  players_stranded: number;
  /** How the killed matches ended. */
  ended: Record<string, number>;
}

/** Figures of the server kills against when each player's next enqueue was accepted. */
export async function serverLossFigures(
  db: Client,
  kills: readonly ServerKill[],
  requeuedAt: ReadonlyMap<string, number>,
): Promise<ServerLossFigures> {
  const freeMs: number[] = [];
  let stranded = 0;
  for (const kill of kills) {
    for (const playerId of kill.playerIds) {
      const at = requeuedAt.get(playerId);
      if (at === undefined) stranded += 1;
      else freeMs.push(at - kill.at);
    }
  }
  const { rows } = await db.query<{ ending: string; count: string }>(
    `SELECT state || coalesce(' ' || failure_reason, '') AS ending, count(*) AS count
       FROM matches WHERE id = ANY($1::uuid[]) GROUP BY 1`,
    [kills.map((kill) => kill.matchId)],
  );
  return {
    matches: kills.length,
    players_free_ms: percentiles(freeMs),
    players_stranded: stranded,
    ended: Object.fromEntries(rows.map((row) => [row.ending, Number(row.count)])),
  };
}
