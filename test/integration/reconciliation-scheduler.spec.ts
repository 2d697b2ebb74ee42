import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue } from 'bullmq';
import { ALLOCATION_RELEASE_QUEUE, releaseJobId } from '@matchplane/allocation';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import type { TicketResponse } from '@matchplane/contracts';
import { bullConnection } from '@matchplane/persistence';
import { CandidateProjection } from '@matchplane/tickets';
import { MaintenanceModule } from '../../apps/maintenance/src/maintenance.module';
import { ReconciliationScheduler } from '../../apps/maintenance/src/reconciliation/reconciliation.scheduler';
import { TestFactories } from '../support/factories';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';

/*
 * The real MaintenanceModule in this process, beside the API's real module graph on the same
 * database and Redis prefix: the reconciliation loop is wired into the app and ends what it
 * should on its own clock, with one log line per pass that did something and its metrics.
 */

class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];

  log(message: unknown, context?: unknown): void {
    this.lines.push(`log ${String(context)}: ${String(message)}`);
  }

  warn(message: unknown, context?: unknown): void {
    this.lines.push(`warn ${String(context)}: ${String(message)}`);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push(`error ${String(rest[rest.length - 1])}: ${String(message)}`);
  }
}

describe(ReconciliationScheduler.name, () => {
  let api: PlayerApi;
  let maintenance: INestApplicationContext | undefined;
  let logs: CapturingLogger;
  let metricsUrl: string;

  beforeEach(async () => {
    api = await startPlayerApi();
    logs = new CapturingLogger();
  });

  afterEach(async () => {
    await maintenance?.close();
    maintenance = undefined;
    await api.close();
  });

  async function startMaintenance(env: Record<string, string> = {}): Promise<void> {
    const port = await freePort();
    const config = loadConfig(MaintenanceConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(port),
      ...env,
    });
    maintenance = await NestFactory.createApplicationContext(MaintenanceModule.forRoot(config), {
      logger: logs,
      abortOnError: false,
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  }

  async function metric(name: string, labels: string): Promise<number | undefined> {
    const text = await (await fetch(metricsUrl)).text();
    const line = text
      .split('\n')
      .find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  const linesOf = (context: string) => logs.lines.filter((line) => line.includes(`${context}:`));

  async function queued(): Promise<TicketResponse> {
    const player = await api.newPlayer();
    await api.probe(player.token, 'eu-west');
    return (await api.enqueue(player.token, 'duel')).json<TicketResponse>();
  }

  it('expires a silent ticket on its own loop, in one log line and in /metrics', async () => {
    const ticket = await queued();
    const projection = api.app.get(CandidateProjection);
    expect(await projection.candidate(ticket.id)).toBeDefined();

    await startMaintenance({
      TICKET_HEARTBEAT_TIMEOUT_MS: '1000',
      TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS: '500',
      RECONCILE_INTERVAL_MS: '200',
    });
    const [line] = await waitFor(
      async () => {
        const lines = linesOf(ReconciliationScheduler.name);
        return Promise.resolve(lines.length > 0 ? lines : undefined);
      },
      { what: 'a reconciliation pass that did something' },
    );

    expect(line).toMatch(
      /^log ReconciliationScheduler: reconciliation pass complete in \d+ ms \(\d+ batches\); reconciled ticket_heartbeat_timeout=1 ticket_search_timeout=0 ready_check_timeout=0 allocating_allocation_failed=0 /,
    );
    const [row] = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM queue_tickets WHERE id = $1`,
      [ticket.id],
    );
    expect(row?.state).toBe('EXPIRED');
    expect(await projection.candidate(ticket.id)).toBeUndefined();
    expect(await metric('reconciliation_reconciled_total', 'case="ticket_heartbeat_timeout"')).toBe(
      1,
    );
    expect(
      await metric('reconciliation_reconciled_total', 'case="in_progress_lifecycle_timeout"'),
    ).toBe(0);
    expect(
      await metric('reconciliation_passes_total', 'outcome="complete"'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('asks the allocator to release an ended match’s server, once while the request waits', async () => {
    const pair = [await queued(), await queued()];
    const f = TestFactories.of(api);
    const matchId = await f.match(pair.map((t) => t.id));
    await f.allocate(matchId);
    await f.cancelMatch(matchId);

    const releases = new Queue(ALLOCATION_RELEASE_QUEUE, {
      connection: bullConnection(api.config),
      prefix: api.prefix,
    });
    try {
      await startMaintenance({ RECONCILE_INTERVAL_MS: '200' });
      const job = await waitFor(() => releases.getJob(releaseJobId(matchId)), {
        what: 'the release request',
      });
      expect(job.data).toEqual({ matchId });
      // Nobody consumes it here (no allocator): later passes find it waiting and do not ask again.
      await waitFor(
        async () =>
          ((await metric('reconciliation_passes_total', 'outcome="complete"')) ?? 0) >= 3
            ? true
            : undefined,
        { what: 'three more passes' },
      );
      expect(
        await metric('reconciliation_reconciled_total', 'case="allocation_release_requested"'),
      ).toBe(1);
      expect(await releases.getJobCounts('waiting')).toEqual({ waiting: 1 });
      // The allocator marks the row once its provider let the server go.
      const [row] = await api.ds.query<{ state: string }[]>(
        `SELECT state FROM allocations WHERE match_id = $1`,
        [matchId],
      );
      expect(row?.state).toBe('ALLOCATED');
    } finally {
      await releases.close();
    }
  });

  it('stops cleanly on shutdown', async () => {
    await startMaintenance({ RECONCILE_INTERVAL_MS: '100' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await maintenance!.close();
    maintenance = undefined;
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
