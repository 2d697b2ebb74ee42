import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import Redis, { type ChainableCommander } from 'ioredis';
import type { DataSource } from 'typeorm';
import {
  homeShards,
  isSplit,
  MATCHER_SHARD_PLAN,
  RedisKeyspace,
  TicketHeartbeatTimeout,
  type MatcherShardPlan,
  redisKeyPrefix,
} from '@matchplane/config';
import {
  readTicketAttributes,
  type CandidateView,
  type TicketAttributes,
  type TicketState,
} from '@matchplane/domain';
import { answerWithin, type AfterCommitOptions, type UnitOfWork } from '@matchplane/persistence';
import { ticketExplanationKey } from './ticket-explanation';
import { searchingTickets, type StoredTicket, type TicketParty } from './ticket.rows';

/** What the projection holds per searching ticket: the matcher's view of a candidate. */
export interface ProjectedCandidate extends CandidateView {
  readonly ticketId: string;
  readonly playerId: string;
  readonly mode: string;
  /** The ticket's revision; absent in a candidate projected before liveness answered heartbeats. */
  readonly revision?: number;
  readonly rating: number;
  /** The rating's uncertainty; absent in a candidate projected before ratings had one. */
  readonly ratingSigma?: number;
  readonly predictedRtt: unknown;
  readonly enqueuedAt: Date;
  /** The later of the row's and the liveness store's last beat (see TicketLiveness). */
  readonly lastHeartbeatAt: Date;
  readonly state: TicketState;
  readonly version: number;
  /** Read back from JSON with readTicketAttributes (a candidate written before attributes: none). */
  readonly attributes: TicketAttributes;
  /** A party member's ticket: its party ticket (the matcher keeps the party whole). */
  readonly party?: TicketParty;
}

export interface CandidateJson {
  ticketId: string;
  playerId: string;
  mode: string;
  revision?: number;
  rating: number;
  ratingSigma?: number;
  predictedRtt: unknown;
  enqueuedAt: number;
  lastHeartbeatAt: number;
  state: TicketState;
  version: number;
  attributes?: unknown;
  party?: TicketParty;
}

/**
 * KEYS: candidate hash, mode index, the matcher's explanation, then the sets the candidate is in
 * (its shards', or the unsharded set) and after them the mode's other shard sets. ARGV: version,
 * ttl ms, searching (1/0), enqueued ms, ticket id, candidate json, player id, how many shard sets
 * it is in. A searching candidate leaves the shard sets it is no longer in (its attributes,
 * regions or the plan changed); one that left the queue leaves them all. The hash holds `v`
 * (version), `c` (the candidate), `p` (its player, which TicketLiveness checks a beat against) and
 * `b` (the last beat TicketLiveness recorded, kept across upserts). An update older than the one
 * applied is dropped, so post-commit writes that reach Redis out of commit order cannot roll a
 * candidate back; a ticket that left the queue leaves a tombstone (its version) for one TTL so a
 * late older upsert cannot resurrect it, and loses the explanation of why it was still searching.
 */
const APPLY_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'v')
if current and tonumber(current) > tonumber(ARGV[1]) then return 0 end
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'v', ARGV[1], 'c', ARGV[6], 'p', ARGV[7])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  local homes = 3 + tonumber(ARGV[8])
  for i = 4, #KEYS do
    if i <= homes then
      redis.call('ZADD', KEYS[i], ARGV[4], ARGV[5])
    else
      redis.call('ZREM', KEYS[i], ARGV[5])
    end
  end
else
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'v', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('DEL', KEYS[3])
  for i = 4, #KEYS do redis.call('ZREM', KEYS[i], ARGV[5]) end
end
return 1
`;
const APPLY_SHA = createHash('sha1').update(APPLY_SCRIPT).digest('hex');

/**
 * The candidate pool in Redis: an index for the matcher, never the truth (the matcher re-checks
 * PostgreSQL before committing). Every write carries the ticket's full current row, read in the
 * committing transaction, so a missed or stale update repairs itself at the next heartbeat; the
 * TTL (the heartbeat timeout) drops a candidate whose player went silent. A mode MATCHER_SHARDS
 * splits also has a set per shard (the shard's own `select` decides membership), so a shard's
 * pass reads only its shard. A candidate the writer's plan puts in no shard (its mode is not split
 * there, or every shard refuses it) goes to the mode's `unsharded` set, which every shard's pass
 * reads too: a writer whose MATCHER_SHARDS lags the matcher's costs whole reads, not candidates.
 */
@Injectable()
export class CandidateProjection {
  private readonly logger = new Logger(CandidateProjection.name);
  private readonly prefix: string;
  private readonly ttlMs: number;

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(TicketHeartbeatTimeout) heartbeat: TicketHeartbeatTimeout,
    @Inject(MATCHER_SHARD_PLAN) private readonly shards: MatcherShardPlan,
  ) {
    this.prefix = redisKeyPrefix(keyspace);
    this.ttlMs = heartbeat.TICKET_HEARTBEAT_TIMEOUT_MS;
  }

  candidateKey(ticketId: string): string {
    return `${this.prefix}:candidate:${ticketId}`;
  }

  modeIndexKey(mode: string): string {
    return `${this.prefix}:candidates:${mode}`;
  }

  // Shard sets extend the mode index's name, so a hash tag given to it later covers them too.
  shardKey(mode: string, shard: string): string {
    return `${this.modeIndexKey(mode)}:shard:${shard}`;
  }

  unshardedKey(mode: string): string {
    return `${this.modeIndexKey(mode)}:unsharded`;
  }

  /** The sets a pass of `shard` reads: its own and the unsharded one, or the whole mode index. */
  shardReadKeys(mode: string, shard?: string): string[] {
    if (shard === undefined || !isSplit(this.shards, mode)) return [this.modeIndexKey(mode)];
    return [this.shardKey(mode, shard), this.unshardedKey(mode)];
  }

  /** Every shard set of `mode` (none when it is not split) and its unsharded set. */
  private shardSetKeys(mode: string): string[] {
    const shards = isSplit(this.shards, mode) ? (this.shards.get(mode) ?? []) : [];
    return [...shards.map(({ name }) => this.shardKey(mode, name)), this.unshardedKey(mode)];
  }

  /** Searching tickets per mode as the projection holds them (one pipeline): the queue depth. */
  async depths(modes: readonly string[]): Promise<Record<string, number>> {
    const pipeline = this.redis.pipeline();
    for (const mode of modes) pipeline.zcard(this.modeIndexKey(mode));
    const results = (await pipeline.exec()) ?? [];
    return Object.fromEntries(
      modes.map((mode, index) => {
        const [error, count] = results[index] ?? [null, 0];
        if (error) throw error;
        return [mode, Number(count)];
      }),
    );
  }

  /** Upserts a searching ticket, removes any other; call after the ticket's transaction commits. */
  async apply(ticket: StoredTicket): Promise<void> {
    await this.applyMany([ticket]);
  }

  /** {@link apply} for several tickets, in one pipeline (one write to Redis). */
  async applyMany(tickets: readonly StoredTicket[]): Promise<void> {
    if (tickets.length === 0) return;
    const calls = tickets.map((ticket) => this.applyCall(ticket));
    const results = await this.evalAll(calls, (pipeline, { keys, args }) =>
      pipeline.evalsha(APPLY_SHA, keys.length, ...keys, ...args),
    );
    // A Redis that restarted or flushed its scripts: send those again with the script's text.
    const unknown = calls.filter((_, index) => isNoScript(results[index]?.[0]));
    const retried = await this.evalAll(unknown, (pipeline, { keys, args }) =>
      pipeline.eval(APPLY_SCRIPT, keys.length, ...keys, ...args),
    );
    const failure = [...results.filter(([error]) => !isNoScript(error)), ...retried].find(
      ([error]) => error,
    );
    if (failure) throw failure[0] as Error;
  }

  /**
   * {@link applyManyAfterCommit} once `unit`'s transaction commits (with the ticket's last state in
   * it, if it changed twice). Every ticket a transaction refreshes goes to Redis in one pipeline.
   * TicketStore's writes register it; nobody else needs to.
   */
  refreshAfterCommit(
    unit: UnitOfWork,
    ticket: StoredTicket,
    options: AfterCommitOptions = {},
  ): void {
    unit.afterCommitBatch(
      'candidates',
      ticket.id,
      ticket,
      (tickets) => this.applyManyAfterCommit(tickets),
      options,
    );
  }

  /**
   * {@link applyMany} for a caller whose state is already committed: a Redis failure is logged, not
   * thrown (the next heartbeat or rebuild repairs the index), and a Redis outage cannot hold up
   * the caller beyond `timeoutMs`.
   */
  async applyManyAfterCommit(tickets: readonly StoredTicket[], timeoutMs = 1_000): Promise<void> {
    if (tickets.length === 0) return;
    try {
      await answerWithin(this.applyMany(tickets), timeoutMs);
    } catch (error) {
      const ids = tickets.map((ticket) => ticket.id).join(', ');
      this.logger.warn(
        `${tickets.length === 1 ? 'candidate' : 'candidates'} ${ids} not updated in Redis: ${(error as Error).message}`,
      );
    }
  }

  /**
   * The mode's candidates, oldest first, or with `shard` (of a split mode) only those in its set
   * and the unsharded set; entries whose candidate expired are dropped from what was read and
   * from the mode index.
   */
  async candidates(mode: string, shard?: string): Promise<ProjectedCandidate[]> {
    const sets = this.shardReadKeys(mode, shard);
    // MIN: a candidate in two of the sets (a write between their reads) keeps its enqueue time.
    const ids =
      sets.length === 1
        ? await this.redis.zrange(sets[0]!, 0, -1)
        : await this.redis.zunion(sets.length, ...sets, 'AGGREGATE', 'MIN');
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.candidateKey(id), 'c', 'b');
    const results = (await pipeline.exec()) ?? [];
    const gone: string[] = [];
    const candidates: ProjectedCandidate[] = [];
    ids.forEach((id, index) => {
      const [error, fields] = results[index] ?? [null, null];
      const [raw, beat] = (fields ?? []) as (string | null)[];
      if (error || typeof raw !== 'string') {
        if (!error) gone.push(id);
        return;
      }
      candidates.push(projectedCandidate(raw, beat ?? null));
    });
    if (gone.length > 0) {
      const cleanup = this.redis.pipeline();
      const keys = [this.modeIndexKey(mode), this.unshardedKey(mode), ...sets];
      for (const key of new Set(keys)) cleanup.zrem(key, ...gone);
      await cleanup.exec();
    }
    return candidates;
  }

  /** One candidate, as the projection holds it (undefined when absent or expired). */
  async candidate(ticketId: string): Promise<ProjectedCandidate | undefined> {
    const [raw, beat] = await this.redis.hmget(this.candidateKey(ticketId), 'c', 'b');
    return typeof raw === 'string' ? projectedCandidate(raw, beat ?? null) : undefined;
  }

  /**
   * Rebuilds the projection from PostgreSQL: every searching ticket is applied (versions keep a
   * newer concurrent write; each candidate is put in, and taken out of, the shard sets its shards
   * say), and entries of tickets no longer searching are removed from the mode indexes and shard sets.
   */
  async rebuild(
    dataSource: DataSource,
    modes: readonly string[],
  ): Promise<{ applied: number; removed: number }> {
    // The index is read before PostgreSQL: a ticket enqueued meanwhile is in neither "before"
    // list nor removed, where reading it after would drop it until its next heartbeat.
    const indexed = new Map<string, string[]>();
    for (const mode of new Set(modes))
      for (const key of [this.modeIndexKey(mode), ...this.shardSetKeys(mode)])
        indexed.set(key, await this.redis.zrange(key, 0, -1));
    const searching = await searchingTickets(dataSource.manager);
    for (const ticket of searching) await this.apply(ticket);
    const live = new Set(searching.map((ticket) => ticket.id));
    const removed = new Set<string>();
    for (const [key, ids] of indexed) {
      const stale = ids.filter((id) => !live.has(id));
      if (stale.length > 0) {
        await this.redis.zrem(key, ...stale);
        await this.redis.del(...stale.map((id) => this.candidateKey(id)));
        for (const id of stale) removed.add(id);
      }
    }
    return { applied: searching.length, removed: removed.size };
  }

  /** The script's KEYS and ARGV for one ticket (see APPLY_SCRIPT). */
  private applyCall(ticket: StoredTicket): ScriptCall {
    const candidate: CandidateJson = {
      ticketId: ticket.id,
      playerId: ticket.playerId,
      mode: ticket.mode,
      revision: ticket.revision,
      rating: ticket.rating,
      ratingSigma: ticket.ratingSigma,
      predictedRtt: ticket.predictedRtt,
      enqueuedAt: ticket.enqueuedAt.getTime(),
      lastHeartbeatAt: ticket.lastHeartbeatAt.getTime(),
      state: ticket.state,
      version: ticket.version,
      attributes: ticket.attributes,
      ...(ticket.party ? { party: ticket.party } : {}),
    };
    const shardSets = this.shardSetKeys(ticket.mode);
    const homes = homeShards(this.shards, ticket.mode, ticket).map((shard) =>
      this.shardKey(ticket.mode, shard),
    );
    // A candidate no shard takes is read by every shard's pass instead.
    if (homes.length === 0) homes.push(this.unshardedKey(ticket.mode));
    const keys = [
      this.candidateKey(ticket.id),
      this.modeIndexKey(ticket.mode),
      ticketExplanationKey(this.prefix, ticket.id),
      ...homes,
      ...shardSets.filter((key) => !homes.includes(key)),
    ];
    const args = [
      ticket.version,
      this.ttlMs,
      ticket.state === 'SEARCHING' ? '1' : '0',
      candidate.enqueuedAt,
      ticket.id,
      JSON.stringify(candidate),
      ticket.playerId,
      homes.length,
    ];
    return { keys, args };
  }

  private async evalAll(
    calls: readonly ScriptCall[],
    add: (pipeline: ChainableCommander, call: ScriptCall) => void,
  ): Promise<[Error | null, unknown][]> {
    if (calls.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const call of calls) add(pipeline, call);
    return (await pipeline.exec()) ?? [];
  }
}

interface ScriptCall {
  readonly keys: string[];
  readonly args: (string | number)[];
}

/** A candidate as stored (`c`), its heartbeat the later of its row's and the last beat (`b`). */
export function projectedCandidate(raw: string, beatMs: string | null): ProjectedCandidate {
  const json = JSON.parse(raw) as CandidateJson;
  return {
    ...json,
    enqueuedAt: new Date(json.enqueuedAt),
    lastHeartbeatAt: new Date(Math.max(json.lastHeartbeatAt, Number(beatMs ?? 0))),
    attributes: readTicketAttributes(json.attributes),
  };
}

export function isNoScript(error: Error | null | undefined): boolean {
  return error?.message.includes('NOSCRIPT') ?? false;
}
