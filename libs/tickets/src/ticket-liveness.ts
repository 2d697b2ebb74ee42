import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { RedisKeyspace, redisKeyPrefix, TicketHeartbeatTimeout } from '@matchplane/config';
import { DEFAULT_SKILL, readTicketAttributes } from '@matchplane/domain';
import { answerWithin } from '@matchplane/persistence';
import { CandidateProjection, isNoScript, type CandidateJson } from './candidate.projection';
import type { RecordedBeat, StoredTicket } from './ticket.rows';

/**
 * KEYS: candidate hash, dirty set. ARGV: player id, beat ms, ttl ms, ticket id. A beat of a
 * searching ticket (its candidate holds `c`) by its own player (`p`): the last beat `b` advanced
 * (never moved back), the candidate's TTL restarted, the ticket marked for the next checkpoint;
 * answers the candidate. Anything else (no candidate, a tombstone, another player's, a candidate
 * projected before `p` existed) answers nil and records nothing: PostgreSQL's path decides.
 */
const BEAT_SCRIPT = `
local fields = redis.call('HMGET', KEYS[1], 'c', 'p', 'b')
if not fields[1] or fields[2] ~= ARGV[1] then return false end
if not fields[3] or tonumber(fields[3]) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'b', ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return fields[1]
`;
const BEAT_SHA = createHash('sha1').update(BEAT_SCRIPT).digest('hex');

/**
 * KEYS: dirty set, taken set. Moves the tickets beaten since the last checkpoint into the taken
 * set (joining any a crashed checkpoint left there) and answers how many it holds.
 */
const TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
  redis.call('DEL', KEYS[1])
end
return redis.call('SCARD', KEYS[2])
`;

/**
 * How long a read of the store may take: its callers hold row locks (expiry, the matcher's commit)
 * or a loop (the checkpoint), and the shared connection queues commands while Redis is down.
 */
const READ_TIMEOUT_MS = 1_000;

export interface TicketBeat {
  readonly ticketId: string;
  readonly playerId: string;
}

/**
 * Where a searching ticket's heartbeats land first: Redis, beside its candidate (field `b` of the
 * candidate hash), so a heartbeat changes no PostgreSQL row. PostgreSQL's `last_heartbeat_at`
 * catches up at each checkpoint (TicketLivenessCheckpoint, which takes the tickets this store
 * marks); expiry and the matcher read the later of the two. Decision 2026-12-07-ticket-liveness.
 */
@Injectable()
export class TicketLiveness {
  private readonly dirtyKey: string;
  private readonly takenKey: string;
  private readonly ttlMs: number;

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    private readonly projection: CandidateProjection,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(TicketHeartbeatTimeout) heartbeat: TicketHeartbeatTimeout,
  ) {
    this.dirtyKey = `${redisKeyPrefix(keyspace)}:liveness:beaten`;
    this.takenKey = `${redisKeyPrefix(keyspace)}:liveness:checkpointing`;
    this.ttlMs = heartbeat.TICKET_HEARTBEAT_TIMEOUT_MS;
  }

  /**
   * Records beats (one pipeline); answers, per beat, its searching ticket as the projection holds
   * it, last beat `now`, or undefined where Redis cannot answer for it (PostgreSQL must).
   */
  async beatMany(beats: readonly TicketBeat[], now: Date): Promise<(StoredTicket | undefined)[]> {
    if (beats.length === 0) return [];
    const call = (beat: TicketBeat): (string | number)[] => [
      this.projection.candidateKey(beat.ticketId),
      this.dirtyKey,
      beat.playerId,
      now.getTime(),
      this.ttlMs,
      beat.ticketId,
    ];
    const pipeline = this.redis.pipeline();
    for (const beat of beats) pipeline.evalsha(BEAT_SHA, 2, ...call(beat));
    let results = (await pipeline.exec()) ?? [];
    if (results.some(([error]) => isNoScript(error))) {
      // A Redis that restarted or flushed its scripts: the whole batch again, with the text.
      const again = this.redis.pipeline();
      for (const beat of beats) again.eval(BEAT_SCRIPT, 2, ...call(beat));
      results = (await again.exec()) ?? [];
    }
    return beats.map((_, index) => {
      const [error, raw] = results[index] ?? [null, null];
      if (error) throw error;
      return typeof raw === 'string' ? searchingTicket(raw, now) : undefined;
    });
  }

  /** The last beats Redis holds for these tickets, by id (tickets without one are left out). */
  async beats(ticketIds: readonly string[]): Promise<Map<string, Date>> {
    const recorded = await this.recordedBeats(ticketIds);
    return new Map([...recorded].map(([id, beat]) => [id, beat.at]));
  }

  /** {@link beats}, each with the version of the candidate it was recorded on (`v`). */
  async recordedBeats(ticketIds: readonly string[]): Promise<Map<string, RecordedBeat>> {
    const beats = new Map<string, RecordedBeat>();
    if (ticketIds.length === 0) return beats;
    const pipeline = this.redis.pipeline();
    for (const id of ticketIds) pipeline.hmget(this.projection.candidateKey(id), 'b', 'v');
    const results = (await answerWithin(pipeline.exec(), READ_TIMEOUT_MS)) ?? [];
    ticketIds.forEach((id, index) => {
      const [error, fields] = results[index] ?? [null, null];
      if (error) throw error;
      const [beat, version] = (fields ?? []) as (string | null)[];
      if (typeof beat === 'string') {
        beats.set(id, { at: new Date(Number(beat)), version: Number(version ?? 0) });
      }
    });
    return beats;
  }

  /** Takes the tickets beaten since the last checkpoint (and any a crashed one left); how many. */
  async takeBeaten(): Promise<number> {
    const taken = this.redis.eval(TAKE_SCRIPT, 2, this.dirtyKey, this.takenKey);
    return Number(await answerWithin(taken, READ_TIMEOUT_MS));
  }

  /** Taken tickets, a page at a time (SSCAN: `cursor` '0' first, done when it answers '0'). */
  async scanTaken(cursor: string, count: number): Promise<[string, string[]]> {
    return answerWithin(this.redis.sscan(this.takenKey, cursor, 'COUNT', count), READ_TIMEOUT_MS);
  }

  /** The taken tickets are checkpointed: forget them. */
  async releaseTaken(): Promise<void> {
    await answerWithin(this.redis.del(this.takenKey), READ_TIMEOUT_MS);
  }
}

/** A searching ticket as its candidate JSON holds it, heartbeating at `now`. */
function searchingTicket(raw: string, now: Date): StoredTicket {
  const json = JSON.parse(raw) as CandidateJson;
  return {
    id: json.ticketId,
    playerId: json.playerId,
    mode: json.mode,
    state: json.state,
    revision: Number(json.revision),
    rating: json.rating,
    ratingSigma: json.ratingSigma ?? DEFAULT_SKILL.sigma,
    predictedRtt: json.predictedRtt as Record<string, number>,
    enqueuedAt: new Date(json.enqueuedAt),
    lastHeartbeatAt: now,
    // The version is the row's updated_at (µs), which is when its state last changed.
    stateChangedAt: new Date(Math.floor(json.version / 1_000)),
    version: json.version,
    attributes: readTicketAttributes(json.attributes),
    ...(json.party ? { party: json.party } : {}),
  };
}
