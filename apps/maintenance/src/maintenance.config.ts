import {
  EnvVar,
  IsIntInRange,
  WorkerConfig,
  healthPort,
  serverHeartbeatTimeoutMs,
  WithNoShowPenalty,
  sessionTtlSeconds,
} from '@matchplane/config';
import { retentionWindowProblems } from './retention/retention-policy';

// The players of a match failed NO_SHOW at the connect deadline are penalised as at initial connect.
export class MaintenanceConfig extends WithNoShowPenalty(WorkerConfig) {
  /** Dead letters are kept longest; idempotency keys outlive sessions and client retries. */
  static override crossVariableProblems(config: MaintenanceConfig): string[] {
    return [
      ...super.crossVariableProblems(config),
      ...retentionWindowProblems(config),
      ...livenessCheckpointProblems(config),
    ];
  }

  @healthPort()
  HEALTH_PORT = 9104;

  // Retention windows. Each outlasts every retry and recovery horizon that could still read its
  // rows: deleting a row early is not just lost history (an idempotency key deleted early turns a
  // client's replay into a second real mutation). Dead letters are kept longest; the maintenance
  // app refuses to start otherwise.

  @EnvVar({
    description:
      "Idempotency keys are deleted this long after they were created (s). A key deleted early turns a client's replay into a second real mutation. Default 48 h: far beyond the SDK's retries (minutes) and twice the default session lifetime (SESSION_TTL_SECONDS, 24 h), so a client replaying a request after logging in again still finds its key; keep it at least SESSION_TTL_SECONDS. Keys younger than the oldest dead letter (minus RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS) are kept whatever this says",
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_IDEMPOTENCY_KEYS_SECONDS = 172_800;

  // The horizons the idempotency window must exceed; the maintenance app refuses to start when it
  // does not (retention-policy.ts).
  @sessionTtlSeconds()
  SESSION_TTL_SECONDS = 86_400;

  @EnvVar({
    description:
      'The longest a client may replay a mutation with the same Idempotency-Key after first sending it (s). The SDK retries for well under a minute; the default, 1 h, also covers a client that queues a request while offline and sends it on reconnect. RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least this',
  })
  @IsIntInRange(60, 31_536_000)
  CLIENT_RETRY_HORIZON_SECONDS = 3_600;

  @EnvVar({
    description:
      'Idempotency keys created up to this long before the oldest dead letter are kept too, since replaying that dead letter may re-drive them (s). Default 1 h: covers the time between a request and the commit of the events it caused',
  })
  @IsIntInRange(0, 31_536_000)
  RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS = 3_600;

  @EnvVar({
    description:
      'Published outbox rows are deleted this long after publication (s). This is the notification resume window: a client catches up on a match (GET /v1/matches/{id}/events?after=N) from these rows, so the default, 7 days, outlasts the longest match plus a client offline for days',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_OUTBOX_PUBLISHED_SECONDS = 604_800;

  @EnvVar({
    description:
      'Dead-lettered outbox rows are deleted this long after they were dead-lettered (s). Kept longest (must be at least every other RETENTION_* window): an operator may replay them until then. Default 90 days',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_OUTBOX_DEAD_LETTERS_SECONDS = 7_776_000;

  @EnvVar({
    description:
      'Sessions are deleted this long after they expired or were revoked (s). Default 7 days: such a session only ever gets its token refused, and keeping it a while says why ("expired", "revoked") to support and to the client',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_SESSIONS_SECONDS = 604_800;

  @EnvVar({
    description:
      'Probe challenges, answered or not, are deleted this long after they expired (s). Default 1 h: a challenge can only be answered before it expires (PROBE_CHALLENGE_TTL_MS, seconds), so after that a replayed answer can only be refused',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_PROBE_CHALLENGES_SECONDS = 3_600;

  @EnvVar({
    description:
      'Ids of recorded probe edge measurements are deleted this long after they were recorded (s). Default 1 h: the id is what refuses a replay, and the API refuses any measurement older than PROBE_MEASUREMENT_MAX_AGE_MS (60 s) anyway, so keep this well above that',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_PROBE_MEASUREMENTS_SECONDS = 3_600;

  @EnvVar({
    description:
      'Finished queue tickets are deleted this long after they finished (s), and only once no retained match still lists them. Default 7 days: a client polls its ticket minutes after it ends, support looks back days',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_TICKETS_SECONDS = 604_800;

  @EnvVar({
    description:
      'Finished matches (with participants, assignments, allocation and roster) are deleted this long after they finished (s), and never while their allocation is still live (its server unreleased). Default 30 days: the match history players, disputes and ratings look back on',
  })
  @IsIntInRange(60, 315_360_000)
  RETENTION_MATCHES_SECONDS = 2_592_000;

  @EnvVar({ description: 'Time from the end of one retention pass to the start of the next (ms)' })
  @IsIntInRange(1_000, 86_400_000)
  RETENTION_PASS_INTERVAL_MS = 60_000;

  @EnvVar({
    description:
      'A retention pass starts no batch after this long (ms); what is left waits for the next pass, so a backlog never turns into one long purge',
  })
  @IsIntInRange(100, 3_600_000)
  RETENTION_PASS_BUDGET_MS = 20_000;

  @EnvVar({
    description:
      'Rows one purge batch deletes at most, in one short transaction (default 1000: row locks held for milliseconds)',
  })
  @IsIntInRange(1, 100_000)
  RETENTION_BATCH_SIZE = 1_000;

  @EnvVar({ description: 'Pause between purge batches, so live transactions get in between (ms)' })
  @IsIntInRange(0, 60_000)
  RETENTION_BATCH_PAUSE_MS = 10;

  @EnvVar({
    description:
      'Pause between purge batches while the database is under pressure: RETENTION_PRESSURE_LOCK_WAITERS sessions waiting on locks, or autovacuum behind on the table just purged (ms)',
  })
  @IsIntInRange(0, 600_000)
  RETENTION_PRESSURE_PAUSE_MS = 1_000;

  @EnvVar({
    description:
      "Sessions of this database waiting on a lock (pg_stat_activity) at which the purge slows down; the role needs pg_read_all_stats (pg_monitor) to see other roles' sessions",
  })
  @IsIntInRange(1, 10_000)
  RETENTION_PRESSURE_LOCK_WAITERS = 3;

  // Lifecycle reconciliation: what no live writer will ever move on (a player gone silent, a
  // server that never registered or never reported) is ended through the state machine.

  @EnvVar({
    description:
      'Time from the end of one reconciliation pass (expired tickets, stuck matches, unreleased allocations) to the start of the next (ms)',
  })
  @IsIntInRange(100, 3_600_000)
  RECONCILE_INTERVAL_MS = 5_000;

  @EnvVar({
    description:
      'Items one reconciliation batch takes at most: expired tickets in one short transaction, or matches and allocations one transaction each',
  })
  @IsIntInRange(1, 10_000)
  RECONCILE_BATCH_SIZE = 100;

  @EnvVar({
    description:
      'A reconciliation pass starts no batch after this long (ms); what is left waits for the next pass',
  })
  @IsIntInRange(100, 3_600_000)
  RECONCILE_PASS_BUDGET_MS = 10_000;

  @EnvVar({
    description:
      'A match still ALLOCATING or PROCESS_READY this long after it entered that state is FAILED (ALLOCATION_FAILED, or SERVER_REGISTRATION_TIMEOUT once a server was allocated) and its tickets requeued at their priority (ms)',
  })
  @IsIntInRange(1_000, 86_400_000)
  RECONCILE_ALLOCATING_TIMEOUT_MS = 60_000;

  @EnvVar({
    description:
      "A match still ASSIGNMENT_READY this long after its players were handed the server, with no initial-connect report, is FAILED NO_SHOW (ms). Keep it above the game server's own connect deadline, so its report wins the race",
  })
  @IsIntInRange(1_000, 86_400_000)
  RECONCILE_CONNECT_DEADLINE_MS = 120_000;

  @EnvVar({
    description:
      'A match still IN_PROGRESS this long after it started is FAILED LIFECYCLE_TIMEOUT (ms; default 2 h, the longest match plus margin)',
  })
  @IsIntInRange(60_000, 604_800_000)
  RECONCILE_MAX_MATCH_DURATION_MS = 7_200_000;

  @serverHeartbeatTimeoutMs()
  SERVER_HEARTBEAT_TIMEOUT_MS = 10_000;

  @EnvVar({
    description:
      "Time from the end of one checkpoint of the tickets' liveness (the heartbeats answered from Redis, written into PostgreSQL's last_heartbeat_at in bulk) to the start of the next (ms). What a Redis restart or flush loses: a ticket then looks this much older (plus a heartbeat interval) to expiry, so keep it plus twice TICKET_HEARTBEAT_INTERVAL_MS under TICKET_HEARTBEAT_TIMEOUT_MS; over half the timeout it is refused",
  })
  @IsIntInRange(100, 600_000)
  TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS = 5_000;
}

/**
 * After a Redis flush a live ticket's row is at most a checkpoint interval plus a heartbeat
 * interval old, and its next heartbeat (through PostgreSQL) comes within another interval: all of
 * it must fit in the heartbeat timeout (defaults: 5 + 2 x 10 < 30 s). Refused here: a checkpoint
 * interval over half the timeout, which no heartbeat cadence could make safe.
 */
function livenessCheckpointProblems(config: MaintenanceConfig): string[] {
  if (2 * config.TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS <= config.TICKET_HEARTBEAT_TIMEOUT_MS) {
    return [];
  }
  return [
    `TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS (${config.TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS}) must be at most half TICKET_HEARTBEAT_TIMEOUT_MS (${config.TICKET_HEARTBEAT_TIMEOUT_MS}): a Redis flush would expire live players`,
  ];
}
