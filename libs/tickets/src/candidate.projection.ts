import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import Redis, { type ChainableCommander } from 'ioredis';
import type { DataSource } from 'typeorm';
import { RedisKeyspace, TicketHeartbeatTimeout } from '@matchplane/config';
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
 * KEYS: candidate hash, mode index, the matcher's explanation. ARGV: version, ttl ms, searching
 * (1/0), enqueued ms, ticket id, candidate json, player id. The hash holds `v` (version), `c`
 * (the candidate), `p` (its player, which TicketLiveness checks a beat against) and `b` (the last
 * beat TicketLiveness recorded, kept across upserts). An update older than the one applied is dropped,
 * so post-commit writes that reach Redis out of commit order cannot roll a candidate back; a
 * ticket that left the queue leaves a tombstone (its version) for one TTL so a late older upsert
 * cannot resurrect it, and loses the explanation of why it was still searching.
 */
const APPLY_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'v')
if current and tonumber(current) > tonumber(ARGV[1]) then return 0 end
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'v', ARGV[1], 'c', ARGV[6], 'p', ARGV[7])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
else
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'v', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('DEL', KEYS[3])
end
return 1
`;
const APPLY_SHA = createHash('sha1').update(APPLY_SCRIPT).digest('hex');

/**
 * The candidate pool in Redis: an index for the matcher, never the truth (the matcher re-checks
 * PostgreSQL before committing). Every write carries the ticket's full current row, read in the
 * committing transaction, so a missed or stale update repairs itself at the next heartbeat; the
 * TTL (the heartbeat timeout) drops a candidate whose player went silent.
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
  ) {
    this.prefix = keyspace.REDIS_KEY_PREFIX;
    this.ttlMs = heartbeat.TICKET_HEARTBEAT_TIMEOUT_MS;
  }

  candidateKey(ticketId: string): string {
    return `${this.prefix}:candidate:${ticketId}`;
  }

  modeIndexKey(mode: string): string {
    return `${this.prefix}:candidates:${mode}`;
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
    const results = await this.evalAll(calls, (pipeline, call) =>
      pipeline.evalsha(APPLY_SHA, 3, ...call),
    );
    // A Redis that restarted or flushed its scripts: send those again with the script's text.
    const unknown = calls.filter((_, index) => isNoScript(results[index]?.[0]));
    const retried = await this.evalAll(unknown, (pipeline, call) =>
      pipeline.eval(APPLY_SCRIPT, 3, ...call),
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

  /** The mode's candidates, oldest first; index entries whose candidate expired are dropped. */
  async candidates(mode: string): Promise<ProjectedCandidate[]> {
    const ids = await this.redis.zrange(this.modeIndexKey(mode), 0, -1);
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
    if (gone.length > 0) await this.redis.zrem(this.modeIndexKey(mode), ...gone);
    return candidates;
  }

  /** One candidate, as the projection holds it (undefined when absent or expired). */
  async candidate(ticketId: string): Promise<ProjectedCandidate | undefined> {
    const [raw, beat] = await this.redis.hmget(this.candidateKey(ticketId), 'c', 'b');
    return typeof raw === 'string' ? projectedCandidate(raw, beat ?? null) : undefined;
  }

  /**
   * Rebuilds the projection from PostgreSQL: every searching ticket is applied (versions keep a
   * newer concurrent write), and index entries of tickets no longer searching are removed.
   */
  async rebuild(
    dataSource: DataSource,
    modes: readonly string[],
  ): Promise<{ applied: number; removed: number }> {
    // The index is read before PostgreSQL: a ticket enqueued meanwhile is in neither "before"
    // list nor removed, where reading it after would drop it until its next heartbeat.
    const indexed = new Map<string, string[]>();
    for (const mode of new Set(modes))
      indexed.set(mode, await this.redis.zrange(this.modeIndexKey(mode), 0, -1));
    const searching = await searchingTickets(dataSource.manager);
    for (const ticket of searching) await this.apply(ticket);
    const live = new Set(searching.map((ticket) => ticket.id));
    let removed = 0;
    for (const [mode, ids] of indexed) {
      const stale = ids.filter((id) => !live.has(id));
      if (stale.length > 0) {
        await this.redis.zrem(this.modeIndexKey(mode), ...stale);
        await this.redis.del(...stale.map((id) => this.candidateKey(id)));
        removed += stale.length;
      }
    }
    return { applied: searching.length, removed };
  }

  /** The script's KEYS then ARGV for one ticket (see APPLY_SCRIPT). */
  private applyCall(ticket: StoredTicket): (string | number)[] {
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
    return [
      this.candidateKey(ticket.id),
      this.modeIndexKey(ticket.mode),
      ticketExplanationKey(this.prefix, ticket.id),
      ticket.version,
      this.ttlMs,
      ticket.state === 'SEARCHING' ? '1' : '0',
      candidate.enqueuedAt,
      ticket.id,
      JSON.stringify(candidate),
      ticket.playerId,
    ];
  }

  private async evalAll(
    calls: readonly (string | number)[][],
    add: (pipeline: ChainableCommander, call: (string | number)[]) => void,
  ): Promise<[Error | null, unknown][]> {
    if (calls.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const call of calls) add(pipeline, call);
    return (await pipeline.exec()) ?? [];
  }
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
