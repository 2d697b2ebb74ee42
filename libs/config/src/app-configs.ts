import { IsIn, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, ValidateIf } from 'class-validator';
import { IsIntInRange, IsPort } from './validators';
import { EnvVar } from './env-var.decorator';
import { IsParsedList, parseQueueModes, parseRegions } from './queue-policy';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every app logs; nothing else is common to all of them. */
export class LoggingConfig {
  @EnvVar({ description: 'Minimum log level' })
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @EnvVar({ description: 'Log format: json (one object per line) or pretty (for humans)' })
  @IsIn(['json', 'pretty'])
  LOG_FORMAT: 'json' | 'pretty' = 'json';
}

export class DatabaseConfig extends LoggingConfig {
  @EnvVar({ description: 'PostgreSQL host' })
  @IsString()
  @IsNotEmpty()
  DATABASE_HOST = '127.0.0.1';

  @EnvVar({ description: 'PostgreSQL port' })
  @IsPort()
  DATABASE_PORT = 5432;

  @EnvVar({ description: 'PostgreSQL user' })
  @IsString()
  @IsNotEmpty()
  DATABASE_USER = 'postgres';

  @EnvVar({ description: 'PostgreSQL password (empty for trust auth)', secret: true })
  @IsOptional()
  @IsString()
  DATABASE_PASSWORD?: string = undefined;

  @EnvVar({ description: 'PostgreSQL database name' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a plain identifier of at most 63 characters' })
  DATABASE_NAME = 'matchplane';

  @EnvVar({ description: 'Connections in this process\'s pool' })
  @IsIntInRange(1, 200)
  DATABASE_POOL_SIZE = 10;
}

export class ServiceConfig extends DatabaseConfig {
  @EnvVar({ description: 'Redis host' })
  @IsString()
  @IsNotEmpty()
  REDIS_HOST = '127.0.0.1';

  @EnvVar({ description: 'Redis port' })
  @IsPort()
  REDIS_PORT = 6379;

  @EnvVar({ description: 'Redis password', secret: true })
  @IsOptional()
  @IsString()
  REDIS_PASSWORD?: string = undefined;

  @EnvVar({ description: 'Prefix of every Redis key and BullMQ queue (isolates deployments and tests)' })
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, "_" or "-"' })
  REDIS_KEY_PREFIX = 'mp';

  // Queue policy: the API, matcher and maintenance must agree on these, hence one definition.
  @EnvVar({ description: 'Queue modes as mode:<team size>x<team count>, comma-separated' })
  @IsParsedList(parseQueueModes, 'comma-separated mode:<team size>x<team count> entries, e.g. duel:1x2,squad:4x2')
  QUEUE_MODES = 'duel:1x2,squad:4x2';

  @EnvVar({ description: 'Regions players probe and matches are placed in, comma-separated' })
  @IsParsedList(parseRegions, 'comma-separated region names, e.g. eu-west,us-east')
  PROBE_REGIONS = 'eu-west,us-east,us-west,ap-southeast';

  @EnvVar({ description: 'How often clients are told to heartbeat a searching ticket (ms)' })
  @IsIntInRange(1_000, 600_000)
  TICKET_HEARTBEAT_INTERVAL_MS = 10_000;

  @EnvVar({
    description:
      'A searching ticket whose last heartbeat is older than this is no longer matchable and is expired (ms; three missed heartbeats by default)',
  })
  @IsIntInRange(1_000, 3_600_000)
  TICKET_HEARTBEAT_TIMEOUT_MS = 30_000;

  // Tracing: the standard OpenTelemetry variables; unset, no span is made or exported.
  @EnvVar({
    description:
      'OTLP/HTTP base URL; traces go to <url>/v1/traces (unset, with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset: tracing off)',
  })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string = undefined;

  @EnvVar({ description: 'OTLP/HTTP traces URL, used as it is (overrides OTEL_EXPORTER_OTLP_ENDPOINT)' })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string = undefined;

  @EnvVar({ description: 'service.name of the spans this process exports (unset: the app name, e.g. dispatcher)' })
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

function healthPort(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Port of the health/metrics listener (GET /health, GET /metrics)' })(target, key);
    IsPort()(target, key);
  };
}

/**
 * The session lifetime is the API's, but the maintenance app must know it too: idempotency keys
 * have to outlive a session (a client that logs in again may replay a request with its old key).
 * Both apps read the same variable, declared once here.
 */
function sessionTtlSeconds(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Lifetime of a player session token (s)' })(target, key);
    IsIntInRange(60, 30 * 86_400)(target, key);
  };
}

/**
 * The no-show penalty is applied by the API (at a server's initial-connect report) and by the
 * maintenance app (at the connect deadline, when no report came): both read the same variables.
 */
function noShowCooldownBaseSeconds(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'First no-show cooldown (s); it doubles with each further no-show of the player' })(target, key);
    IsIntInRange(0, 86_400)(target, key);
  };
}

function noShowCooldownCapSeconds(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Longest no-show cooldown (s)' })(target, key);
    IsIntInRange(0, 30 * 86_400)(target, key);
  };
}

export class ApiConfig extends ServiceConfig {
  @EnvVar({ description: 'Address the API binds' })
  @IsString()
  @IsNotEmpty()
  API_HOST = '0.0.0.0';

  @EnvVar({ description: 'Port of the HTTP and WebSocket API (also serves /health and /metrics)' })
  @IsPort()
  API_PORT = 3000;

  @EnvVar({
    description:
      'Operator credentials for /v1/admin: comma-separated name=token pairs, each token at least 32 characters. Unset: admin routes answer 503',
    secret: true,
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.@-]+=[^,=\s]{32,}(,[A-Za-z0-9_.@-]+=[^,=\s]{32,})*$/, {
    message: 'must be comma-separated name=token pairs with tokens of at least 32 characters',
  })
  OPERATOR_TOKENS?: string = undefined;

  @sessionTtlSeconds()
  SESSION_TTL_SECONDS = 86_400;

  @EnvVar({ description: 'How long a probe challenge may be answered (ms); a slower answer is no usable RTT' })
  @IsIntInRange(100, 60_000)
  PROBE_CHALLENGE_TTL_MS = 5_000;

  @EnvVar({ description: 'Probe samples kept per player and region; the estimate is their median' })
  @IsIntInRange(1, 50)
  PROBE_SAMPLES_KEPT = 3;

  @EnvVar({
    description:
      "lock_timeout of the API's database sessions (ms): how long a request waits for a row lock, e.g. for a concurrent request with the same Idempotency-Key, before answering 409",
  })
  @IsIntInRange(10, 60_000)
  API_LOCK_TIMEOUT_MS = 5_000;

  @EnvVar({
    description:
      'Largest JSON request body (bytes); a larger one is refused with 413 PAYLOAD_TOO_LARGE before it is parsed',
  })
  @IsIntInRange(1_024, 16_777_216)
  API_BODY_LIMIT_BYTES = 65_536;

  @EnvVar({
    description:
      'Deepest nesting of arrays and objects in a JSON body or notification frame; deeper is refused (400 JSON_TOO_DEEP, or an `error` message on a socket) before anything walks it recursively. Our own messages nest at most 3 deep',
  })
  @IsIntInRange(4, 512)
  API_JSON_MAX_DEPTH = 32;

  @EnvVar({ description: 'Heartbeats arriving together share one transaction: at most this many in one' })
  @IsIntInRange(1, 1_000)
  HEARTBEAT_BATCH_SIZE = 128;

  @EnvVar({
    description:
      'Heartbeat transactions in flight at once; heartbeats arriving while all are busy go together in the next',
  })
  @IsIntInRange(1, 64)
  HEARTBEAT_BATCHES_IN_FLIGHT = 4;

  @EnvVar({
    description:
      'Reverse proxies in front of the API whose X-Forwarded-For is trusted: the client address (which per-address limits count) is the one this many hops back. 0: the peer address itself',
  })
  @IsIntInRange(0, 16)
  API_TRUST_PROXY_HOPS = 0;

  // Abuse limits (fixed windows counted in Redis, so they hold across API replicas). Each default
  // sits far above what a well-behaved client does: the SDK heartbeats once per
  // TICKET_HEARTBEAT_INTERVAL_MS (10 s) and probes a few times per region when it signs in.

  @EnvVar({
    description:
      'Window of every API_RATE_LIMIT_* count (ms); a client that goes over a limit is refused with 429 RATE_LIMITED and Retry-After for one window from then',
  })
  @IsIntInRange(1_000, 3_600_000)
  API_RATE_LIMIT_WINDOW_MS = 60_000;

  @EnvVar({
    description:
      'Sessions one client address may create (POST /v1/sessions) per window; 0: no limit. Generous for players sharing an address (NAT)',
  })
  @IsIntInRange(0, 10_000_000)
  API_RATE_LIMIT_SESSIONS_PER_ADDRESS = 300;

  @EnvVar({
    description:
      'Requests one player session may make on player routes (queue, probes, matches) per window; 0: no limit. Default 600 a minute: 100 times the SDK\'s heartbeat cadence',
  })
  @IsIntInRange(0, 10_000_000)
  API_RATE_LIMIT_REQUESTS_PER_SESSION = 600;

  @EnvVar({
    description:
      'Probe challenges one player session may ask for per window (POST /v1/probes/{region}/challenge); 0: no limit. The SDK asks a few per region when it signs in',
  })
  @IsIntInRange(0, 10_000_000)
  API_RATE_LIMIT_PROBES_PER_SESSION = 120;

  @EnvVar({
    description:
      'Requests one game server (its workload credential and server id) may make on server routes per window; 0: no limit. A server makes a handful per match',
  })
  @IsIntInRange(0, 10_000_000)
  API_RATE_LIMIT_REQUESTS_PER_SERVER = 600;

  @EnvVar({
    description:
      'Requests one client address may make on player and server routes per window, whatever the credential (a flood of made-up tokens included); 0: no limit. Default 120,000 a minute: thousands of players behind one NAT',
  })
  @IsIntInRange(0, 100_000_000)
  API_RATE_LIMIT_REQUESTS_PER_ADDRESS = 120_000;

  @EnvVar({
    description:
      'Notification sockets one player session may hold open on one API replica; one more is closed with 4429 (TOO_MANY_CONNECTIONS). 0: no limit',
  })
  @IsIntInRange(0, 100_000)
  NOTIFY_MAX_SOCKETS_PER_SESSION = 8;

  @EnvVar({
    description:
      'Notification sockets one client address may hold open on one API replica (authenticated or not); one more is closed with 4429 before its token is read. 0: no limit',
  })
  @IsIntInRange(0, 10_000_000)
  NOTIFY_MAX_SOCKETS_PER_ADDRESS = 10_000;

  @EnvVar({ description: 'JWT players: JWKS URL of the identity provider (or PLAYER_JWT_JWKS_FILE)' })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  PLAYER_JWT_JWKS_URL?: string = undefined;

  @EnvVar({ description: 'JWT players: path of a JSON JWKS file (or PLAYER_JWT_JWKS_URL)' })
  @IsOptional()
  @IsString()
  PLAYER_JWT_JWKS_FILE?: string = undefined;

  @EnvVar({ description: 'JWT players: required `iss` claim' })
  @IsOptional()
  @IsString()
  PLAYER_JWT_ISSUER?: string = undefined;

  @EnvVar({ description: 'JWT players: required `aud` claim' })
  @IsOptional()
  @IsString()
  PLAYER_JWT_AUDIENCE?: string = undefined;

  @EnvVar({
    description:
      'Notification sockets: messages a client may leave unread (confirmed by WebSocket pong) before it is sent a resync and closed with 4008',
  })
  @IsIntInRange(4, 100_000)
  NOTIFY_SOCKET_BUFFER = 256;

  @EnvVar({
    description:
      'Notification sockets: bytes queued in the server for one socket (ws bufferedAmount) at which it is closed with 4008 like an overflowing buffer',
  })
  @IsIntInRange(1_024, 268_435_456)
  NOTIFY_SOCKET_BUFFER_BYTES = 1_048_576;

  @EnvVar({
    description:
      'Notification sockets: ping interval (ms); a socket that answered no ping for a whole interval is dropped as dead',
  })
  @IsIntInRange(100, 600_000)
  NOTIFY_HEARTBEAT_INTERVAL_MS = 30_000;

  @EnvVar({ description: 'Notification sockets: matches one resume message may name' })
  @IsIntInRange(1, 1_000)
  NOTIFY_RESUME_MAX_MATCHES = 20;

  @noShowCooldownBaseSeconds()
  NO_SHOW_COOLDOWN_BASE_SECONDS = 60;

  @noShowCooldownCapSeconds()
  NO_SHOW_COOLDOWN_CAP_SECONDS = 3_600;

  @EnvVar({
    description:
      'A match whose no-shows leave some team with fewer connected players than this fails (NO_SHOW) at initial connect; otherwise it goes on without them',
  })
  @IsIntInRange(1, 64)
  MATCH_MIN_CONNECTED_PER_TEAM = 1;
}

export class DispatcherConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9101;

  @EnvVar({ description: 'Relay polling backstop: how often it looks for due rows without a wake-up (ms)' })
  @IsIntInRange(10, 60_000)
  OUTBOX_POLL_INTERVAL_MS = 250;

  @EnvVar({
    description:
      'Least time between the starts of two relay claim passes; the commit signals of a burst within it cost one pass (ms)',
  })
  @IsIntInRange(0, 1_000)
  OUTBOX_RELAY_MIN_INTERVAL_MS = 5;

  @EnvVar({
    description:
      'Least time between the starts of two settle statements (acks, failures, next claims) of one dispatcher; the results arriving within it share one (ms)',
  })
  @IsIntInRange(0, 1_000)
  OUTBOX_SETTLE_MIN_INTERVAL_MS = 5;

  @EnvVar({ description: 'Aggregate heads the relay claims per query (at most the free delivery slots)' })
  @IsIntInRange(1, 10_000)
  OUTBOX_CLAIM_BATCH = 500;

  @EnvVar({
    description:
      'A dispatcher whose heartbeat is older than this is presumed dead and its claims are taken over; it beats every third of it (ms)',
  })
  @IsIntInRange(300, 600_000)
  OUTBOX_OWNER_TIMEOUT_MS = 1_500;

  @EnvVar({
    description:
      'Last-resort backstop: a claim older than this is presumed abandoned even if its owner still beats (ms)',
  })
  @IsIntInRange(1_000, 3_600_000)
  OUTBOX_CLAIM_LEASE_MS = 60_000;

  @EnvVar({ description: 'Failed deliveries of one row before it is dead-lettered' })
  @IsIntInRange(1, 1_000)
  MAX_OUTBOX_DELIVERY_ATTEMPTS = 10;

  @EnvVar({ description: 'First retry delay ceiling after a failed delivery; doubles per attempt (ms)' })
  @IsIntInRange(0, 3_600_000)
  OUTBOX_RETRY_BASE_MS = 500;

  @EnvVar({ description: 'Largest retry delay after a failed delivery (ms)' })
  @IsIntInRange(0, 86_400_000)
  OUTBOX_RETRY_CAP_MS = 60_000;

  @EnvVar({ description: 'Aggregates one dispatcher process delivers at once (one event each)' })
  @IsIntInRange(1, 10_000)
  DISPATCHER_CONCURRENCY = 64;
}

export class MatcherConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9102;

  // Syntax only here; the matcher also checks at start-up that the steps only widen (see
  // apps/matcher/src/matcher-rules.ts), which needs the domain's rule checks.
  @EnvVar({
    description:
      'Widening steps of every mode, comma-separated afterMs:maxRttMs:ratingWindow (ratingWindow "inf": any rating). The first step is at 0 ms; later ones only widen. A ticket that has waited afterMs accepts that step\'s limits',
  })
  @Matches(/^\d{1,9}:\d{1,6}:(\d{1,9}|inf)(,\d{1,9}:\d{1,6}:(\d{1,9}|inf)){0,15}$/, {
    message:
      'must be comma-separated afterMs:maxRttMs:ratingWindow steps, e.g. 0:50:100,10000:100:200',
  })
  MATCH_WIDENING = '0:50:100,10000:100:200,30000:200:400';

  @EnvVar({
    description:
      'Per-mode widening overriding MATCH_WIDENING: mode=steps entries separated by ";", e.g. squad=0:60:150,20000:100:300',
  })
  @IsOptional()
  @Matches(
    /^[a-z0-9][a-z0-9_-]{0,63}=\d{1,9}:\d{1,6}:(\d{1,9}|inf)(,\d{1,9}:\d{1,6}:(\d{1,9}|inf)){0,15}(;[a-z0-9][a-z0-9_-]{0,63}=\d{1,9}:\d{1,6}:(\d{1,9}|inf)(,\d{1,9}:\d{1,6}:(\d{1,9}|inf)){0,15})*$/,
    { message: 'must be ";"-separated mode=afterMs:maxRttMs:ratingWindow,... entries' },
  )
  MATCH_WIDENING_BY_MODE?: string = undefined;

  @EnvVar({
    description: 'Time from the end of one matching pass of a mode to the start of the next (ms)',
  })
  @IsIntInRange(10, 60_000)
  MATCHER_PASS_INTERVAL_MS = 500;

  @EnvVar({
    description:
      'How often the candidate projection in Redis is rebuilt from PostgreSQL, repairing missed updates (ms; it is also rebuilt at start-up)',
  })
  @IsIntInRange(1_000, 86_400_000)
  MATCHER_REBUILD_INTERVAL_MS = 60_000;

  @EnvVar({
    description:
      'Matches committed per PostgreSQL transaction (larger: fewer commits; smaller: shorter ticket row locks). A match whose write fails is retried alone, so it never takes the others down',
  })
  @IsIntInRange(1, 1_000)
  MATCHER_COMMIT_BATCH = 16;
}

export const ALLOCATION_PROVIDERS = ['local', 'static', 'agones'] as const;
export type AllocationProviderName = (typeof ALLOCATION_PROVIDERS)[number];

/** The allocator's steps, in order (ALLOCATOR_EXIT_AFTER_STEP names one). */
export const ALLOCATION_STEPS = ['allocated', 'persisted', 'published', 'handed-off'] as const;
export type AllocationStep = (typeof ALLOCATION_STEPS)[number];

export class AllocatorConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9103;

  @EnvVar({
    description:
      'Join-key set the allocator signs with: a JSON map {keyId: base64Key} (or a raw key file, id ""). The same Secret is mounted into every game server. Required: the allocator refuses to start without usable key material',
  })
  @IsString()
  @IsNotEmpty({ message: 'must be the path of the join key file (the allocator cannot sign without it)' })
  JOIN_KEYS_FILE = '';

  @EnvVar({
    description:
      'Key id new join tokens and roster manifests are signed with; must be in JOIN_KEYS_FILE. Required for a key map; unset for a raw key file (id "")',
  })
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'must be 1-64 visible ASCII characters' })
  JOIN_ACTIVE_KEY_ID?: string = undefined;

  @EnvVar({ description: 'Lifetime of a join token and of the assignment it authorises, from publication (ms)' })
  @IsIntInRange(10_000, 86_400_000)
  JOIN_TOKEN_TTL_MS = 600_000;

  @EnvVar({ description: 'Where game servers come from: local (child processes), static (a fixed pool) or agones' })
  @IsIn(ALLOCATION_PROVIDERS)
  ALLOCATION_PROVIDER: AllocationProviderName = 'local';

  @EnvVar({ description: 'Base URL of the Matchplane API as game servers reach it (handed to each server)' })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  ALLOCATOR_API_URL = 'http://127.0.0.1:3000';

  @EnvVar({
    description:
      'Attempts at allocating one match (each one resumes where the last stopped) before the match fails with ALLOCATION_FAILED',
  })
  @IsIntInRange(1, 100)
  ALLOCATION_MAX_ATTEMPTS = 5;

  @EnvVar({ description: 'First retry delay of a failed allocation attempt; doubles per attempt, jittered (ms)' })
  @IsIntInRange(0, 600_000)
  ALLOCATION_RETRY_BASE_MS = 500;

  @EnvVar({ description: 'Largest retry delay of a failed allocation attempt (ms)' })
  @IsIntInRange(0, 3_600_000)
  ALLOCATION_RETRY_CAP_MS = 30_000;

  @EnvVar({ description: 'Allocations one allocator process works on at once' })
  @IsIntInRange(1, 1_000)
  ALLOCATOR_CONCURRENCY = 16;

  @EnvVar({
    description:
      'Lock on a running allocation job: a job whose allocator died is taken over after about this long (ms)',
  })
  @IsIntInRange(1_000, 600_000)
  ALLOCATION_LOCK_MS = 30_000;

  @EnvVar({ description: 'local provider: the game-server entrypoint it runs with this Node.js' })
  @IsString()
  @IsNotEmpty()
  LOCAL_SERVER_ENTRY = 'dist/apps/game-server/src/main.js';

  @EnvVar({ description: 'local provider: address the launched game servers bind and players connect to' })
  @IsString()
  @IsNotEmpty()
  LOCAL_SERVER_HOST = '127.0.0.1';

  @EnvVar({ description: "local provider: the launched servers' output: inherit (the allocator's) or ignore" })
  @IsIn(['inherit', 'ignore'])
  LOCAL_SERVER_OUTPUT: 'inherit' | 'ignore' = 'inherit';

  @EnvVar({
    description:
      'local provider: extra environment of the launched servers, comma-separated KEY=VALUE (e.g. CONNECT_DEADLINE_MS=3000)',
  })
  @IsOptional()
  @Matches(/^[A-Z_][A-Z0-9_]*=[^,]*(,[A-Z_][A-Z0-9_]*=[^,]*)*$/, { message: 'must be comma-separated KEY=VALUE pairs' })
  LOCAL_SERVER_ENV?: string = undefined;

  @EnvVar({ description: 'static provider: the pool, comma-separated id=host:port entries (required for static)' })
  @ValidateIf((config: AllocatorConfig) => config.ALLOCATION_PROVIDER === 'static')
  @Matches(/^[A-Za-z0-9._-]{1,255}=[^,=\s]+:\d{1,5}(,[A-Za-z0-9._-]{1,255}=[^,=\s]+:\d{1,5})*$/, {
    message: 'must be comma-separated id=host:port entries when ALLOCATION_PROVIDER=static',
  })
  STATIC_SERVERS?: string = undefined;

  @EnvVar({
    description:
      'static provider: URL a pooled server is handed its match and credential at (POST, JSON); {id}, {host} and {port} are replaced (required for static)',
  })
  @ValidateIf((config: AllocatorConfig) => config.ALLOCATION_PROVIDER === 'static')
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL template when ALLOCATION_PROVIDER=static' })
  STATIC_HANDOFF_URL?: string = undefined;

  @EnvVar({ description: 'agones provider: Kubernetes API URL; unset: in-cluster service account' })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  AGONES_API_URL?: string = undefined;

  @EnvVar({ description: 'agones provider: file holding the bearer token for AGONES_API_URL (unset: no token)' })
  @IsOptional()
  @IsString()
  AGONES_TOKEN_FILE?: string = undefined;

  @EnvVar({ description: 'agones provider: namespace of the Fleet and its GameServers' })
  @Matches(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { message: 'must be a Kubernetes namespace name' })
  AGONES_NAMESPACE = 'default';

  @EnvVar({ description: 'agones provider: the Fleet allocated from (required for agones)' })
  @ValidateIf((config: AllocatorConfig) => config.ALLOCATION_PROVIDER === 'agones')
  @Matches(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, {
    message: 'must be a Fleet name when ALLOCATION_PROVIDER=agones',
  })
  AGONES_FLEET?: string = undefined;

  @EnvVar({ description: "agones provider: name of the GameServer port players connect to (unset: its first port)" })
  @IsOptional()
  @IsString()
  AGONES_PORT_NAME?: string = undefined;

  @EnvVar({
    description:
      'Fault injection for crash-recovery tests only: the allocator process exits right after this step of an allocation. Never set in production',
  })
  @IsOptional()
  @IsIn(ALLOCATION_STEPS)
  ALLOCATOR_EXIT_AFTER_STEP?: AllocationStep = undefined;
}

export class MaintenanceConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9104;

  // Retention windows. Each outlasts every retry and recovery horizon that could still read its
  // rows: deleting a row early is not just lost history (an idempotency key deleted early turns a
  // client's replay into a second real mutation). Dead letters are kept longest; the maintenance
  // app refuses to start otherwise.

  @EnvVar({
    description:
      'Idempotency keys are deleted this long after they were created (s). A key deleted early turns a client\'s replay into a second real mutation. Default 48 h: far beyond the SDK\'s retries (minutes) and twice the default session lifetime (SESSION_TTL_SECONDS, 24 h), so a client replaying a request after logging in again still finds its key; keep it at least SESSION_TTL_SECONDS. Keys younger than the oldest dead letter (minus RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS) are kept whatever this says',
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
      'Sessions of this database waiting on a lock (pg_stat_activity) at which the purge slows down; the role needs pg_read_all_stats (pg_monitor) to see other roles\' sessions',
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
      'A match still ASSIGNMENT_READY this long after its players were handed the server, with no initial-connect report, is FAILED NO_SHOW (ms). Keep it above the game server\'s own connect deadline, so its report wins the race',
  })
  @IsIntInRange(1_000, 86_400_000)
  RECONCILE_CONNECT_DEADLINE_MS = 120_000;

  @EnvVar({
    description:
      'A match still IN_PROGRESS this long after it started is FAILED LIFECYCLE_TIMEOUT (ms; default 2 h, the longest match plus margin)',
  })
  @IsIntInRange(60_000, 604_800_000)
  RECONCILE_MAX_MATCH_DURATION_MS = 7_200_000;

  // The players of a match failed NO_SHOW at the connect deadline are penalised as at initial connect.
  @noShowCooldownBaseSeconds()
  NO_SHOW_COOLDOWN_BASE_SECONDS = 60;

  @noShowCooldownCapSeconds()
  NO_SHOW_COOLDOWN_CAP_SECONDS = 3_600;
}

/**
 * The reference game server holds no database or Redis credentials: in production it runs in a
 * game-server fleet and talks only to the API with its own workload credential.
 */
export class GameServerConfig extends LoggingConfig {
  /**
   * The variables (libs/contracts GameServerEnv) a provider sets when it launches a server for a
   * match. All or none: with none the server only serves health (standby, e.g. the boot test); a
   * partial set is a refusal to start, naming what is missing.
   */
  static readonly MATCH_VARIABLES = [
    'MATCHPLANE_SERVER_ID',
    'MATCHPLANE_SERVER_CREDENTIAL',
    'MATCHPLANE_MATCH_ID',
    'MATCHPLANE_JOIN_KEYS_FILE',
    'MATCHPLANE_SERVER_PORT',
  ] as const;

  static matchAssigned(config: GameServerConfig): boolean {
    return GameServerConfig.MATCH_VARIABLES.some((key) => config[key] !== undefined);
  }

  @EnvVar({ description: 'Base URL of the Matchplane API' })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  MATCHPLANE_API_URL = 'http://127.0.0.1:3000';

  @EnvVar({ description: 'Address the game server (player WebSocket) and its health listener bind' })
  @IsString()
  @IsNotEmpty()
  HEALTH_HOST = '0.0.0.0';

  // 0 (an ephemeral port, logged) lets a local provider run many servers on one host.
  @EnvVar({ description: 'Port of the health/metrics listener (GET /health, GET /metrics); 0 picks a free one' })
  @IsIntInRange(0, 65535)
  HEALTH_PORT = 9105;

  @EnvVar({ description: 'Server id the allocator assigned; required for a match (set by the provider)' })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @Matches(/^\P{Cc}{1,255}$/u, { message: 'must be 1-255 characters without control characters' })
  MATCHPLANE_SERVER_ID?: string = undefined;

  @EnvVar({
    description: 'Workload credential bound to the server id (Authorization: Bearer); required for a match',
    secret: true,
  })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @IsString()
  @IsNotEmpty()
  MATCHPLANE_SERVER_CREDENTIAL?: string = undefined;

  @EnvVar({ description: 'Id of the match this server hosts; required for a match' })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, {
    message: 'must be a lowercase uuid',
  })
  MATCHPLANE_MATCH_ID?: string = undefined;

  @EnvVar({
    description:
      'Join key-set file (JSON map {keyId: base64Key}, or raw key bytes) that verifies join tokens and the roster manifest; required for a match',
  })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @IsString()
  @IsNotEmpty()
  MATCHPLANE_JOIN_KEYS_FILE?: string = undefined;

  @EnvVar({ description: 'Port players connect to (WebSocket, path /join); required for a match' })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @IsPort()
  MATCHPLANE_SERVER_PORT?: number = undefined;

  @EnvVar({ description: 'Image (or build) digest reported at registration, e.g. sha256:...' })
  @IsString()
  @IsNotEmpty()
  GAME_SERVER_IMAGE_DIGEST = 'unversioned';

  @EnvVar({
    description:
      'How long the server keeps asking for its roster before giving up (ms); the allocator publishes it before launching the server, so this only covers API hiccups',
  })
  @IsIntInRange(0, 600_000)
  ROSTER_WAIT_MS = 30_000;

  @EnvVar({
    description:
      'After registering, how long players have to connect before initial-connect is reported (ms); reported earlier once every rostered player is connected',
  })
  @IsIntInRange(100, 600_000)
  CONNECT_DEADLINE_MS = 10_000;

  @EnvVar({ description: 'How long a connection may take to send its join message (ms)' })
  @IsIntInRange(100, 60_000)
  JOIN_HANDSHAKE_TIMEOUT_MS = 5_000;

  @EnvVar({ description: 'Length of the (trivial) match the reference server plays (ms)' })
  @IsIntInRange(0, 3_600_000)
  MATCH_DURATION_MS = 2_000;

  @EnvVar({ description: 'Interval of the tick messages sent to players during the match (ms)' })
  @IsIntInRange(10, 60_000)
  MATCH_TICK_INTERVAL_MS = 500;
}

export class MigrateConfig extends DatabaseConfig {
  @EnvVar({ description: 'Database used to create DATABASE_NAME when it is missing' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a plain identifier of at most 63 characters' })
  DATABASE_ADMIN_NAME = 'postgres';
}
