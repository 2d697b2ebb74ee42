/**
 * The outbox bench's peer: a graphile-worker pool that does what our dispatcher's client
 * notification subscriber does (one Redis PUBLISH of the notification per job). Run by
 * outbox.bench.ts as a child process, one per dispatcher it compares with:
 *   node dist/test/bench/graphile-peer.worker.js '<PeerWorkerOptions as JSON>'
 * Connection settings come from the environment (DATABASE_*, REDIS_*), as for our apps.
 */
import { Logger, run, type Runner, type Task } from 'graphile-worker';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { ServiceConfig, loadConfig } from '@matchplane/config';

export interface PeerWorkerOptions {
  /** Redis channel the notifications go to. */
  channel: string;
  concurrency: number;
  pollIntervalMs: number;
  /** graphile-worker's batched fetch (`localQueue.size`); -1 is off. */
  localQueueSize: number;
  /** graphile-worker's batched completion (`completeJobBatchDelay`); -1 is off. */
  completeJobBatchDelayMs: number;
}

/** The job payload the bench's peer writers add, shaped like our StateNotification. */
export interface PeerJobPayload {
  event: string;
  aggregateType: string;
  aggregateId: string;
  revision: number;
  state: string;
  occurredAt: string;
  playerIds: string[];
}

export const PEER_TASK = 'deliver';
export const PEER_READY_LINE = 'graphile-peer ready';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as PeerWorkerOptions;
  const config = loadConfig(ServiceConfig);
  const redis = new Redis({
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    password: config.REDIS_PASSWORD,
  });
  const pgPool = new Pool({
    host: config.DATABASE_HOST,
    port: config.DATABASE_PORT,
    user: config.DATABASE_USER,
    password: config.DATABASE_PASSWORD,
    database: config.DATABASE_NAME,
    // graphile-worker's advice: at least concurrency + 2.
    max: options.concurrency + 2,
    application_name: 'mp-bench-graphile-peer',
  });
  const report = (error: Error) =>
    process.stderr.write(`graphile-peer: PostgreSQL client error: ${error.message}\n`);
  pgPool.on('error', report);
  pgPool.on('connect', (client) => client.on('error', report));
  const deliver: Task = async (payload) => {
    // The same message shape and transport as our subscriber's (Nest Redis transport: {pattern, data}).
    await redis.publish(
      options.channel,
      JSON.stringify({ pattern: options.channel, data: payload as PeerJobPayload }),
    );
  };
  const runner: Runner = await run({
    pgPool,
    concurrency: options.concurrency,
    pollInterval: options.pollIntervalMs,
    noPreparedStatements: false,
    noHandleSignals: true,
    taskList: { [PEER_TASK]: deliver },
    logger: new Logger(() => (level, message) => {
      if (String(level) === 'error' || String(level) === 'warning')
        process.stderr.write(`graphile-peer: ${message}\n`);
    }),
    preset: {
      worker: {
        ...(options.localQueueSize > 1 ? { localQueue: { size: options.localQueueSize } } : {}),
        completeJobBatchDelay: options.completeJobBatchDelayMs,
      },
    },
  });
  process.stdout.write(`${PEER_READY_LINE}\n`);
  const stop = () => {
    void runner
      .stop()
      .then(() => Promise.all([pgPool.end(), redis.quit()]))
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await runner.promise;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `graphile-peer: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
