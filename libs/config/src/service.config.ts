import { IsNotEmpty, IsOptional, IsString, IsUrl, Matches } from 'class-validator';
import { DatabaseConfig } from './database.config';
import { EnvVar } from './env-var.decorator';
import { IsQueueModeAttributes } from './queue-attributes';
import { IsParsedList, parseQueueModes, parseRegions, QUEUE_MODES_SYNTAX } from './queue-policy';
import { IsSearchTimeouts } from './search-timeouts';
import { IsAcceptanceTimeouts } from './acceptance-timeouts';
import { IsRejoinGrace } from './rejoin-grace';
import { IsFlag, IsIntInRange, IsPort } from './validators';
import { IsCertificateFile, parseRedisClusterNodes, parseRedisSentinels } from './connection-hosts';
import { readMatcherShardPlan } from './matcher-shards';

export class ServiceConfig extends DatabaseConfig {
  /** Subclasses with checks of their own add them to these (`super.crossVariableProblems`). */
  static crossVariableProblems(config: ServiceConfig): string[] {
    return readMatcherShardPlan(config).problems;
  }

  @EnvVar({
    description:
      'Redis as one URL, redis://user:password@host:port (rediss:// for TLS), instead of REDIS_HOST, REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS. A part it leaves out comes from its own variable; a variable that disagrees with it stops the app. With REDIS_SENTINELS its host, if any, is the master name and it has no port',
    secret: true,
  })
  @IsOptional()
  @IsString()
  REDIS_URL?: string = undefined;

  @EnvVar({ description: 'Redis host' })
  @IsString()
  @IsNotEmpty()
  REDIS_HOST = '127.0.0.1';

  @EnvVar({ description: 'Redis port' })
  @IsPort()
  REDIS_PORT = 6379;

  @EnvVar({ description: 'Redis ACL user (unset: the default user)' })
  @IsOptional()
  @IsString()
  REDIS_USERNAME?: string = undefined;

  @EnvVar({
    description: 'Redis password (of REDIS_USERNAME, or of the default user)',
    secret: true,
  })
  @IsOptional()
  @IsString()
  REDIS_PASSWORD?: string = undefined;

  @EnvVar({
    description:
      'Reach Redis over TLS (true or false; a rediss:// REDIS_URL says true). With REDIS_SENTINELS the sentinels too',
  })
  @IsFlag()
  REDIS_TLS = false;

  @EnvVar({
    description:
      "PEM file of the CA that signed Redis's certificate (unset: the system CAs); needs REDIS_TLS",
  })
  @IsOptional()
  @IsCertificateFile()
  REDIS_TLS_CA_FILE?: string = undefined;

  @EnvVar({
    description:
      'Redis Sentinel: the sentinels to ask for the master, host[:port],host[:port] (port 26379 when left out). Every Redis connection of the app (stores, BullMQ, pub/sub) then follows the master through a failover. Needs REDIS_SENTINEL_MASTER; REDIS_HOST and REDIS_PORT stay unset',
  })
  @IsOptional()
  @IsParsedList(
    parseRedisSentinels,
    'a comma-separated list of host[:port] entries, e.g. sentinel-1:26379,sentinel-2:26379',
  )
  REDIS_SENTINELS?: string = undefined;

  @EnvVar({
    description:
      'The master name the sentinels monitor ("sentinel monitor <name>"); needs REDIS_SENTINELS',
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1-64 letters, digits, ".", "_" or "-"' })
  REDIS_SENTINEL_MASTER?: string = undefined;

  @EnvVar({
    description: "The sentinels' own password (their requirepass), when they have one",
    secret: true,
  })
  @IsOptional()
  @IsString()
  REDIS_SENTINEL_PASSWORD?: string = undefined;

  @EnvVar({
    description:
      'Redis Cluster: some of its masters, host[:port],host[:port] (port 6379 when left out; the rest are discovered). Every Redis connection of the app (stores, BullMQ, pub/sub) then speaks the cluster protocol and every key carries the hash tag {REDIS_KEY_PREFIX}. REDIS_URL, REDIS_HOST, REDIS_PORT and the sentinel variables stay unset; credentials and TLS come from REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS',
  })
  @IsOptional()
  @IsParsedList(
    parseRedisClusterNodes,
    'a comma-separated list of host[:port] entries, e.g. redis-1:6379,redis-2:6379',
  )
  REDIS_CLUSTER_NODES?: string = undefined;

  @EnvVar({
    description: 'Prefix of every Redis key and BullMQ queue (isolates deployments and tests)',
  })
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, "_" or "-"' })
  REDIS_KEY_PREFIX = 'mp';

  // Queue policy: the API, matcher and maintenance must agree on these, hence one definition.
  @EnvVar({
    description:
      'Queue modes, comma-separated: mode:<team size>x<team count>, or mode:<size>+<size>... for teams of different sizes (hunt:4+1: a team of 4 v a team of 1); README "QUEUE_MODES"',
  })
  @IsParsedList(parseQueueModes, QUEUE_MODES_SYNTAX)
  QUEUE_MODES = 'duel:1x2,squad:4x2';

  @EnvVar({
    description:
      'Ticket attributes and rules per mode, JSON: {"<mode>": {"attributes": {"<name>": {"type": "string", "values": [...]} | {"type": "number", "min": n, "max": n, "integer"?: true} | {"type": "set", "values": [...]}, each with an optional "default" (without one it is required)}, "rules": [{"equal": "<name>", "optionalAfterSeconds"?: s} | {"intersect": "<set name>", "optionalAfterSeconds"?: s} | {"roles": "<set name>", "perTeam": {"<role>": n}, "optionalAfterSeconds"?: s} | {"distance": "<name>", "widening": [{"afterMs": 0, "maxDistance": n}, ...]}]}}. Unset or a mode left out: no attributes (README "Ticket attributes"; docs/architecture/match-formation.md ("Ticket attributes and rules"))',
  })
  @IsOptional()
  @IsQueueModeAttributes()
  QUEUE_MODE_ATTRIBUTES?: string = undefined;

  @EnvVar({
    description:
      'How long a ticket may search before it ends EXPIRED SEARCH_TIMED_OUT (its party with it), per mode: mode=ms entries, comma-separated, *=ms for every mode not named; a mode with neither searches until matched. Counted from when the ticket (re)entered the queue',
  })
  @IsSearchTimeouts()
  QUEUE_SEARCH_TIMEOUTS = '*=600000';

  @EnvVar({
    description:
      'Ready check per mode: how long every matched player has to accept before the match is CANCELLED ACCEPTANCE_TIMEOUT (no server is allocated before all accept). mode=ms entries, comma-separated, *=ms for every mode not named; unset or a mode with neither: no ready check',
  })
  @IsAcceptanceTimeouts()
  QUEUE_ACCEPTANCE_TIMEOUTS = '';

  @EnvVar({
    description:
      'How long a player who left a running match may rejoin it (its game server reports the leave) before it is ABANDONED (cooldown and a rated loss), per mode: mode=ms entries, comma-separated, *=ms for every mode not named (1000-600000)',
  })
  @IsRejoinGrace()
  QUEUE_REJOIN_GRACE = '*=60000';

  @EnvVar({
    description:
      'How often the API and each matcher read the active rule set version (ms): an activation or rollback through the operator API or `npm run rule-sets` applies within this interval, without a restart (docs/architecture/rule-sets.md)',
  })
  @IsIntInRange(100, 600_000)
  RULE_SET_POLL_INTERVAL_MS = 2_000;

  @EnvVar({ description: 'Regions players probe and matches are placed in, comma-separated' })
  @IsParsedList(parseRegions, 'comma-separated region names, e.g. eu-west,us-east')
  PROBE_REGIONS = 'eu-west,us-east,us-west,ap-southeast';

  // Every app that writes tickets indexes their candidates by shard, so every app reads it.
  @EnvVar({
    description:
      'Splits a mode\'s pool into shards, each matched under its own lease, so several matchers match one mode at once: a JSON object of mode -> {"attribute": "<name>"} (one shard per declared value of a string attribute the mode has an "equal" rule on in QUEUE_MODE_ATTRIBUTES) or {"regions": {"<group>": ["<region>", ...]}} (one shard per region group; a region no group lists belongs to the first). A mode it does not name is one shard. Each matcher holds a fair share of the shards and takes over those of a matcher that went away. Every app must have the same value: the apps that write tickets index each candidate under its shard, and a shard\'s pass reads only that index',
  })
  @IsOptional()
  @Matches(/^\s*\{/, { message: 'must be a JSON object of mode -> shard key' })
  MATCHER_SHARDS?: string = undefined;

  @EnvVar({ description: 'How often clients are told to heartbeat a searching ticket (ms)' })
  @IsIntInRange(1_000, 600_000)
  TICKET_HEARTBEAT_INTERVAL_MS = 10_000;

  @EnvVar({
    description:
      'A searching ticket whose last heartbeat is older than this is no longer matchable and is expired (ms; three missed heartbeats by default)',
  })
  @IsIntInRange(1_000, 3_600_000)
  TICKET_HEARTBEAT_TIMEOUT_MS = 30_000;

  @EnvVar({
    description:
      "Wait estimates (a ticket's estimatedWaitSeconds) are the median wait of the players matched in its mode and region within this window (s); none within it: no estimate",
  })
  @IsIntInRange(10, 86_400)
  QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS = 600;

  // Tracing: the standard OpenTelemetry variables; unset, no span is made or exported.
  @EnvVar({
    description:
      'OTLP/HTTP base URL; traces go to <url>/v1/traces (unset, with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset: tracing off)',
  })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string = undefined;

  @EnvVar({
    description: 'OTLP/HTTP traces URL, used as it is (overrides OTEL_EXPORTER_OTLP_ENDPOINT)',
  })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string = undefined;

  @EnvVar({
    description:
      'service.name of the spans this process exports (unset: the app name, e.g. dispatcher)',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  OTEL_SERVICE_NAME?: string = undefined;
}

export type TracingConfig = Pick<
  ServiceConfig,
  'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME'
>;

/** Shared by the worker apps: they serve only health and metrics over HTTP. */
export abstract class WorkerConfig extends ServiceConfig {
  @EnvVar({ description: 'Address the health/metrics listener binds' })
  @IsString()
  @IsNotEmpty()
  HEALTH_HOST = '0.0.0.0';

  abstract HEALTH_PORT: number;
}

export function healthPort(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Port of the health/metrics listener (GET /health, GET /metrics)' })(
      target,
      key,
    );
    IsPort()(target, key);
  };
}

/**
 * The session lifetime is the API's, but the maintenance app must know it too: idempotency keys
 * have to outlive a session (a client that logs in again may replay a request with its old key).
 * Both apps read the same variable, declared once here.
 */
export function sessionTtlSeconds(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Lifetime of a player session token (s)' })(target, key);
    IsIntInRange(60, 30 * 86_400)(target, key);
  };
}

/**
 * Any config class (every one constructs without arguments). `any[]` because TypeScript accepts
 * only that constructor type as a mixin's base.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ConfigBase = abstract new (...args: any[]) => object;

/**
 * The no-show penalty is applied by the API (at a server's initial-connect report) and by the
 * maintenance app (at the connect deadline, when no report came): both apps' configs extend
 * `WithNoShowPenalty(...)`, so both read the same variables, declared once here.
 */
export function WithNoShowPenalty<Base extends ConfigBase>(base: Base) {
  abstract class NoShowPenaltyVariables extends base {
    @EnvVar({
      description: 'First no-show cooldown (s); it doubles with each further no-show of the player',
    })
    @IsIntInRange(0, 86_400)
    NO_SHOW_COOLDOWN_BASE_SECONDS = 60;

    @EnvVar({ description: 'Longest no-show cooldown (s)' })
    @IsIntInRange(0, 30 * 86_400)
    NO_SHOW_COOLDOWN_CAP_SECONDS = 3_600;

    @EnvVar({
      description:
        'Offences (no-shows, ready checks, abandoned matches) decay: one is forgiven per this many seconds without a new one, so the next cooldown starts lower (0: never forgiven)',
    })
    @IsIntInRange(0, 365 * 86_400)
    NO_SHOW_OFFENCE_DECAY_SECONDS = 86_400;
  }
  return NoShowPenaltyVariables;
}

/**
 * Server liveness: the maintenance app fails the match of a registered game server silent this
 * long (SERVER_LOST); the reference game server heartbeats every third of it by default.
 */
export function serverHeartbeatTimeoutMs(): PropertyDecorator {
  return (target, key) => {
    EnvVar({
      description:
        'A registered game server that has not heartbeated for this long loses its match: FAILED SERVER_LOST, allocation released, players free to queue at once (ms)',
    })(target, key);
    IsIntInRange(500, 600_000)(target, key);
  };
}

/*
 * Narrow options: what one service needs of ServiceConfig, as a DI token of its own. Each names its
 * variables as the config does, so a ServiceConfig (or an app's config) also satisfies it where a
 * test or a CLI constructs the service directly.
 */

/** The value of a narrow option provider: just the named variables of a config, frozen. */
export function pickVariables<T extends object, K extends keyof T>(
  config: T,
  variables: readonly K[],
): Pick<T, K> {
  return Object.freeze(
    Object.fromEntries(variables.map((variable) => [variable, config[variable]])),
  ) as Pick<T, K>;
}

/**
 * The prefix of every Redis key, channel and queue of this deployment (REDIS_KEY_PREFIX). Keys
 * start with {@link redisKeyPrefix}, which under Redis Cluster is hash-tagged.
 */
export abstract class RedisKeyspace {
  abstract readonly REDIS_KEY_PREFIX: string;
  abstract readonly REDIS_CLUSTER_NODES?: string;

  static of(config: RedisKeyspace): RedisKeyspace {
    return pickVariables(config, ['REDIS_KEY_PREFIX', 'REDIS_CLUSTER_NODES']);
  }
}

/**
 * What every Redis key and BullMQ queue name starts with. Under Redis Cluster it is the hash tag
 * `{prefix}`, so all of a deployment's keys share one slot and every multi-key script, MULTI and
 * pipeline stays legal (docs/decisions/2026-12-07-redis-cluster.md); elsewhere the bare prefix,
 * so a single server's keys keep the names they had. Channels keep the bare prefix: pub/sub has
 * no slots.
 */
export function redisKeyPrefix(keyspace: RedisKeyspace): string {
  return keyspace.REDIS_CLUSTER_NODES === undefined
    ? keyspace.REDIS_KEY_PREFIX
    : `{${keyspace.REDIS_KEY_PREFIX}}`;
}

/** Where Redis is and how to reach it: every Redis connection of the apps is built from these. */
export abstract class RedisConnectionConfig {
  abstract readonly REDIS_HOST: string;
  abstract readonly REDIS_PORT: number;
  abstract readonly REDIS_USERNAME?: string;
  abstract readonly REDIS_PASSWORD?: string;
  abstract readonly REDIS_TLS: boolean;
  abstract readonly REDIS_TLS_CA_FILE?: string;
  abstract readonly REDIS_SENTINELS?: string;
  abstract readonly REDIS_SENTINEL_MASTER?: string;
  abstract readonly REDIS_SENTINEL_PASSWORD?: string;
  abstract readonly REDIS_CLUSTER_NODES?: string;

  static of(config: RedisConnectionConfig): RedisConnectionConfig {
    return pickVariables(config, [
      'REDIS_HOST',
      'REDIS_PORT',
      'REDIS_USERNAME',
      'REDIS_PASSWORD',
      'REDIS_TLS',
      'REDIS_TLS_CA_FILE',
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_MASTER',
      'REDIS_SENTINEL_PASSWORD',
      'REDIS_CLUSTER_NODES',
    ]);
  }
}

/** When a searching ticket stops being matchable (TICKET_HEARTBEAT_TIMEOUT_MS). */
export abstract class TicketHeartbeatTimeout {
  abstract readonly TICKET_HEARTBEAT_TIMEOUT_MS: number;

  static of(config: TicketHeartbeatTimeout): TicketHeartbeatTimeout {
    return pickVariables(config, ['TICKET_HEARTBEAT_TIMEOUT_MS']);
  }
}

/** The window recent matches' waits are estimated over (QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS). */
export abstract class QueueWaitEstimateWindow {
  abstract readonly QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS: number;

  static of(config: QueueWaitEstimateWindow): QueueWaitEstimateWindow {
    return pickVariables(config, ['QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS']);
  }
}
