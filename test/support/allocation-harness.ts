import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import type { ServerHandOff, TicketResponse } from '@matchplane/contracts';
import { loadConfig } from '@matchplane/config';
import { AllocatorConfig } from '../../apps/allocator/src/allocator.config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { AllocationReleaseStage, type StaticServer } from '@matchplane/allocation';
import { KeySet } from '@matchplane/join-auth';
import { MatchLifecycle } from '@matchplane/matches';
import { MetricsRegistry } from '@matchplane/observability';
import type { StageBatch } from '@matchplane/persistence';
// The apps' real module graphs in process (libs never import apps; tests may).
import { AllocatorModule } from '../../apps/allocator/src/allocator.module';
import { AllocationStepHook } from '../../apps/allocator/src/allocation-step.hook';
import { StaticHandOff } from '../../apps/allocator/src/providers/static-handoff';
import { QueuedAllocationReleaser } from '../../apps/maintenance/src/reconciliation/queued-allocation.releaser';
import { TestFactories } from './factories';
import { startInProcessDispatcher, type InProcessDispatcher } from './outbox-fixtures';
import type { PlayerApi } from './player-api';
import { freePort, waitFor } from './processes';

/*
 * The allocation suites' shared setup: the API's real module graph in process (players, queue and
 * the game-server routes), the real dispatcher in process (its AllocationTriggerSubscriber turns a
 * new match into an allocation job), and the real allocator module in process. Matches are
 * committed the way the matcher's MatchCommitter commits them; nothing seeds allocations,
 * assignments or rosters.
 */

export const REGION = 'eu-west';

/** A key-set file as the Secret mounts it: a JSON map of base64 keys. */
export class KeyFiles {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'mp-keys-'));
  readonly keys = new Map<string, Buffer>();

  key(id: string): Buffer {
    let key = this.keys.get(id);
    if (!key) {
      key = randomBytes(32);
      this.keys.set(id, key);
    }
    return key;
  }

  /** Writes a key file holding exactly these key ids (creating keys on first mention). */
  write(name: string, ids: readonly string[]): string {
    const file = path.join(this.dir, name);
    writeFileSync(
      file,
      JSON.stringify(Object.fromEntries(ids.map((id) => [id, this.key(id).toString('base64')]))),
    );
    return file;
  }

  keySet(ids: readonly string[]): KeySet {
    return KeySet.fromKeys(Object.fromEntries(ids.map((id) => [id, this.key(id)])));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The pooled servers' hand-off endpoint: records what the allocator processes POST. */
export class HandOffSink {
  readonly received: ServerHandOff[] = [];
  private server?: Server;

  async start(): Promise<number> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        this.received.push(JSON.parse(body) as ServerHandOff);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  of(matchId: string): ServerHandOff[] {
    return this.received.filter((h) => h.matchId === matchId);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Captures what the static provider hands each pooled server. */
export class CapturingHandOff extends StaticHandOff {
  readonly handOffs: ServerHandOff[] = [];
  onHandOff?: (handOff: ServerHandOff) => void;

  deliver(_server: StaticServer, handOff: ServerHandOff): Promise<void> {
    this.handOffs.push(handOff);
    this.onHandOff?.(handOff);
    return Promise.resolve();
  }

  latest(matchId: string): ServerHandOff | undefined {
    return [...this.handOffs].reverse().find((h) => h.matchId === matchId);
  }
}

const SILENT: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export interface InProcessAllocator {
  app: INestApplicationContext;
  config: AllocatorConfig;
  close(): Promise<void>;
}

/** The real AllocatorModule in process, with optional provider overrides. */
export async function startInProcessAllocator(
  api: PlayerApi,
  env: Record<string, string>,
  overrides: { handOff?: StaticHandOff; stepHook?: AllocationStepHook } = {},
): Promise<InProcessAllocator> {
  const config = loadConfig(AllocatorConfig, {
    ...api.db.env,
    REDIS_KEY_PREFIX: api.prefix,
    HEALTH_PORT: String(await freePort()),
    HEALTH_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ALLOCATION_RETRY_BASE_MS: '50',
    ALLOCATION_RETRY_CAP_MS: '200',
    ...env,
  });
  let builder = Test.createTestingModule({ imports: [AllocatorModule.forRoot(config)] }).setLogger(
    SILENT,
  );
  if (overrides.handOff)
    builder = builder.overrideProvider(StaticHandOff).useValue(overrides.handOff);
  if (overrides.stepHook)
    builder = builder.overrideProvider(AllocationStepHook).useValue(overrides.stepHook);
  const app = await builder.compile();
  await app.init();
  return { app, config, close: () => app.close() };
}

/**
 * The real allocator on the static provider: a pool of `servers` at 127.0.0.1 from `firstPort`
 * (nothing listens; `handOff` captures what each server is handed) and one join key.
 */
export function startStaticAllocator(
  api: PlayerApi,
  keys: KeyFiles,
  handOff: CapturingHandOff,
  pool: { servers: number; firstPort: number },
): Promise<InProcessAllocator> {
  return startInProcessAllocator(
    api,
    {
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'static',
      STATIC_SERVERS: Array.from(
        { length: pool.servers },
        (_, i) => `gs-${i}=127.0.0.1:${pool.firstPort + i}`,
      ).join(','),
      STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
    },
    { handOff },
  );
}

export async function startDispatcherFor(api: PlayerApi): Promise<InProcessDispatcher> {
  return startInProcessDispatcher({
    ...api.db.env,
    REDIS_KEY_PREFIX: api.prefix,
    HEALTH_PORT: String(await freePort()),
    HEALTH_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    OUTBOX_POLL_INTERVAL_MS: '50',
  });
}

export interface QueuedPlayer {
  token: string;
  playerId: string;
  ticket: TicketResponse;
}

/**
 * Players through the real routes: a guest session, probes (by default of REGION alone), a ticket
 * in `mode`. `probeDelaysMs` names each region to probe and how long the player takes to answer
 * its challenge: the server measures that as the player's RTT there.
 */
export async function queuePlayers(
  api: PlayerApi,
  count: number,
  mode: string,
  probeDelaysMs: Readonly<Record<string, number>> = { [REGION]: 0 },
  attributesOf?: (index: number) => Record<string, unknown>,
): Promise<QueuedPlayer[]> {
  const players: QueuedPlayer[] = [];
  for (let i = 0; i < count; i += 1) {
    const session = await api.newPlayer();
    for (const [region, delayMs] of Object.entries(probeDelaysMs)) {
      const probe = await api.probe(session.token, region, delayMs);
      if (probe.statusCode >= 300) throw new Error(`probe: ${probe.statusCode} ${probe.body}`);
    }
    const attributes = attributesOf?.(i);
    const created = attributes
      ? await api.request('POST', '/v1/queue/tickets', {
          token: session.token,
          body: { mode, attributes },
          idempotencyKey: randomUUID(),
        })
      : await api.enqueue(session.token, mode);
    if (created.statusCode !== 201)
      throw new Error(`enqueue: ${created.statusCode} ${created.body}`);
    players.push({
      token: session.token,
      playerId: session.playerId,
      ticket: created.json<TicketResponse>(),
    });
  }
  return players;
}

/**
 * Commits a match of these players as the matcher's MatchCommitter does (see
 * {@link TestFactories.match}): the match created ALLOCATING and every ticket MATCHED in one
 * transaction, the relay's wake-up and the tickets' re-projection after the commit.
 */
export function commitMatch(
  api: PlayerApi,
  players: readonly QueuedPlayer[],
  mode: string,
  teamOf: (index: number) => number = (index) => index % 2,
  region = REGION,
): Promise<string> {
  return TestFactories.of(api).match(
    players.map((player) => player.ticket.id),
    { mode, region, teamOf },
  );
}

export async function matchState(
  ds: DataSource,
  matchId: string,
): Promise<{ state: string; revision: number; failure_reason: string | null }> {
  const [row] = await ds.query<
    { state: string; revision: string; failure_reason: string | null }[]
  >(`SELECT state, revision, failure_reason FROM matches WHERE id = $1`, [matchId]);
  if (!row) throw new Error(`no match ${matchId}`);
  return { state: row.state, revision: Number(row.revision), failure_reason: row.failure_reason };
}

export async function countRows(
  ds: DataSource,
  table: 'allocations' | 'assignments' | 'roster_manifests',
  matchId: string,
): Promise<number> {
  const [row] = await ds.query<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM ${table} WHERE match_id = $1`,
    [matchId],
  );
  return row?.n ?? 0;
}

export async function ticketStates(
  ds: DataSource,
  matchId: string,
): Promise<Record<string, string>> {
  const rows = await ds.query<{ player_id: string; state: string }[]>(
    `SELECT t.player_id, t.state FROM match_participants p JOIN queue_tickets t ON t.id = p.ticket_id WHERE p.match_id = $1`,
    [matchId],
  );
  return Object.fromEntries(rows.map((row) => [row.player_id, row.state]));
}

export function waitForHandOff(
  handOffs: CapturingHandOff,
  matchId: string,
  timeoutMs = 20_000,
): Promise<ServerHandOff> {
  return waitFor(() => Promise.resolve(handOffs.latest(matchId)), {
    timeoutMs,
    intervalMs: 25,
    what: `hand-off of match ${matchId}`,
  });
}

/** A game server's call: the route with its workload credential. */
export function serverCall(
  api: PlayerApi,
  method: 'GET' | 'POST' | 'DELETE',
  route: string,
  credential: string | undefined,
  body?: unknown,
) {
  return api.request(method, `/v1/${route}`, {
    ...(credential === undefined ? {} : { token: credential }),
    ...(body === undefined ? {} : { body }),
  });
}

/** Makes the in-process API reachable over HTTP (for servers running as processes); its base URL. */
export async function listenOnLoopback(api: PlayerApi): Promise<string> {
  const port = await freePort();
  await api.app.listen(port, '127.0.0.1');
  return `http://127.0.0.1:${port}`;
}

/**
 * Ends a match the way an operator or reconciliation does, without its server reporting: the
 * allocation stays live, so only a release can give the server back.
 */
export async function cancelMatch(api: PlayerApi, matchId: string): Promise<void> {
  await api.app.get(MatchLifecycle, { strict: false }).cancelNow(matchId, 'OPERATOR_CANCELLED');
}

export interface ReleaseRequests {
  /** One pass of reconciliation's release stage, as the maintenance app runs it. */
  pass(): Promise<StageBatch>;
  close(): Promise<void>;
}

/** Reconciliation's release stage over the API's database and Redis prefix, handing releases to the allocator. */
export function releaseRequests(api: PlayerApi): ReleaseRequests {
  const releaser = new QueuedAllocationReleaser(
    loadConfig(MaintenanceConfig, { ...api.db.env, REDIS_KEY_PREFIX: api.prefix }),
  );
  const stage = new AllocationReleaseStage(api.ds, releaser, { batchSize: 10 });
  return {
    pass: () => stage.batch(new Date(), new Set()),
    close: () => releaser.onModuleDestroy(),
  };
}

/** The region the match's allocation records (null: none recorded; undefined: no allocation). */
export async function allocationRegion(
  ds: DataSource,
  matchId: string,
): Promise<string | null | undefined> {
  const [row] = await ds.query<{ region: string | null }[]>(
    `SELECT region FROM allocations WHERE match_id = $1`,
    [matchId],
  );
  return row?.region;
}

/** The payloads of the match's `match.state_changed` events, by revision, as consumers get them. */
export async function matchEventPayloads(
  ds: DataSource,
  matchId: string,
): Promise<{ to: string; region: string; serverRegion?: string }[]> {
  const rows = await ds.query<{ payload: { to: string; region: string; serverRegion?: string } }[]>(
    `SELECT payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
    [matchId],
  );
  return rows.map((row) => row.payload);
}

export async function allocationState(
  ds: DataSource,
  matchId: string,
): Promise<string | undefined> {
  const [row] = await ds.query<{ state: string }[]>(
    `SELECT state FROM allocations WHERE match_id = $1`,
    [matchId],
  );
  return row?.state;
}

/** The allocator's release counter for `outcome` (released, failed). */
export async function releasesCounted(
  allocator: InProcessAllocator,
  outcome: 'released' | 'failed',
): Promise<number> {
  const metric = allocator.app.get(MetricsRegistry).getSingleMetric('allocation_releases_total');
  const values = (await metric?.get())?.values ?? [];
  return values
    .filter((value) => value.labels.outcome === outcome)
    .reduce((sum, value) => sum + value.value, 0);
}

/** Waits until the allocation is RELEASED (by the allocator's release worker). */
export function waitForRelease(api: PlayerApi, matchId: string): Promise<true> {
  return waitFor(
    async () => ((await allocationState(api.ds, matchId)) === 'RELEASED' ? true : undefined),
    { what: `the allocation of match ${matchId} to be released` },
  );
}

/** Ends a live match as an operator would and waits until reconciliation had its server released. */
export async function endAndRelease(api: PlayerApi, matchId: string): Promise<void> {
  await cancelMatch(api, matchId);
  const requests = releaseRequests(api);
  try {
    await requests.pass();
    await waitForRelease(api, matchId);
  } finally {
    await requests.close();
  }
}
