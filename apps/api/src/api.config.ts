import { IsNotEmpty, IsOptional, IsString, IsUrl, Matches, MinLength } from 'class-validator';
import {
  EnvVar,
  IsFlag,
  IsIntInRange,
  IsParsedList,
  IsPort,
  parseProbeEdges,
  parseRegions,
  ServiceConfig,
  WithNoShowPenalty,
  sessionTtlSeconds,
} from '@matchplane/config';

export class ApiConfig extends WithNoShowPenalty(ServiceConfig) {
  /** ServiceConfig's checks (MATCHER_SHARDS), then this app's. */
  static override crossVariableProblems(config: ApiConfig): string[] {
    return [...super.crossVariableProblems(config), ...ApiConfig.probeEdgeProblems(config)];
  }

  /** PROBE_EDGES names only regions PROBE_REGIONS lists, and needs the key set to verify with. */
  private static probeEdgeProblems(config: ApiConfig): string[] {
    if (config.PROBE_EDGES === undefined) return [];
    const problems: string[] = [];
    const known = new Set(parseRegions(config.PROBE_REGIONS));
    const unknown = parseProbeEdges(config.PROBE_EDGES)
      .map(({ region }) => region)
      .filter((region) => !known.has(region));
    if (unknown.length > 0) {
      problems.push(
        `PROBE_EDGES names ${unknown.join(', ')}, which PROBE_REGIONS (${config.PROBE_REGIONS}) does not list`,
      );
    }
    if (config.PROBE_KEYS_FILE === undefined) {
      problems.push(
        'PROBE_EDGES is set but PROBE_KEYS_FILE is not: the measurements of the edges could not be verified',
      );
    }
    return problems;
  }

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

  @EnvVar({
    description:
      "How long (ms) a replica trusts a session it looked up without asking PostgreSQL again (never past the session's expiry). A sign-out evicts it on every replica as its announcement arrives; a lost announcement leaves it accepted elsewhere up to this long. Used only while the replica's revocation subscription is live. 0: every request looks its session up",
  })
  @IsIntInRange(0, 600_000)
  SESSION_CACHE_TTL_MS = 60_000;

  @EnvVar({
    description:
      'Sessions a replica keeps cached at most (SESSION_CACHE_TTL_MS); the least recently used goes first',
  })
  @IsIntInRange(1, 10_000_000)
  SESSION_CACHE_MAX_ENTRIES = 100_000;

  @EnvVar({
    description:
      'How long a probe challenge may be answered (ms); a slower answer is no usable RTT',
  })
  @IsIntInRange(100, 60_000)
  PROBE_CHALLENGE_TTL_MS = 5_000;

  @EnvVar({
    description:
      "Probe edges per region, each region's endpoints in order: <region>=<url>|<url>,... with http(s):// (browsers) and udp:// (game clients) URLs, e.g. eu-west=http://10.0.0.5:7001|udp://10.0.0.5:7002. Listed on GET /v1/queue/options; the SDK probes there. Unset: clients probe the API itself (one region, or a demo)",
  })
  @IsOptional()
  @IsParsedList(parseProbeEdges, '<region>=<url>|<url> entries, comma-separated')
  PROBE_EDGES?: string = undefined;

  @EnvVar({
    description:
      'Probe key set the API verifies edge-signed measurements with: a JSON map {keyId: base64Key} (or a raw key file, id ""), the Secret the edges sign with; it may hold the old and the new key during a rotation. Required with PROBE_EDGES; unset: POST /v1/probes/measurements answers 503 NOT_CONFIGURED. An unreadable or malformed file stops the API at start-up',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  PROBE_KEYS_FILE?: string = undefined;

  @EnvVar({
    description:
      'An edge-signed probe measurement older than this (ms, by its measuredAt) is refused 410 PROBE_MEASUREMENT_EXPIRED: a player must hand it over fresh. Keep it well under RETENTION_PROBE_MEASUREMENTS_SECONDS (maintenance), how long measurement ids are kept against replay',
  })
  @IsIntInRange(1_000, 600_000)
  PROBE_MEASUREMENT_MAX_AGE_MS = 60_000;

  @EnvVar({
    description:
      'How long a party invite code may be used to join (s) from when the leader created the party',
  })
  @IsIntInRange(30, 86_400)
  PARTY_INVITE_TTL_SECONDS = 900;

  @EnvVar({
    description:
      "How many players one player may block (PUT /v1/blocks/{playerId}); a block beyond it is a 409 BLOCK_LIST_FULL. The matcher reads every searching player's list each pass, so this bounds that read",
  })
  @IsIntInRange(1, 1_000)
  PLAYER_BLOCK_LIST_MAX_ENTRIES = 100;

  @EnvVar({
    description:
      "How many players one player may avoid (PUT /v1/avoids/{playerId}); one beyond it is a 409 AVOID_LIST_FULL. The matcher reads every searching player's list each pass, so this bounds that read",
  })
  @IsIntInRange(1, 1_000)
  PLAYER_AVOID_LIST_MAX_ENTRIES = 100;

  @EnvVar({
    description:
      'How long a lobby lives idle (s): each change (join, leave, kick, teams, start) pushes its expiry back by this much; an expired lobby is gone',
  })
  @IsIntInRange(1, 86_400)
  LOBBY_TTL_SECONDS = 1_800;

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
      "How long a client may take to send a whole request, headers and body (ms); a slower one is answered 408 REQUEST_TIMEOUT and disconnected. Node's default is 300 s (and Fastify's none), which let a byte-a-second client hold a connection for minutes; 30 s still carries a full body over a 2G link",
  })
  @IsIntInRange(1_000, 300_000)
  API_REQUEST_TIMEOUT_MS = 30_000;

  @EnvVar({
    description:
      'How long a client may take to send the request line and headers (ms; at most API_REQUEST_TIMEOUT_MS), else 408 REQUEST_TIMEOUT',
  })
  @IsIntInRange(500, 300_000)
  API_HEADERS_TIMEOUT_MS = 10_000;

  @EnvVar({
    description:
      'Deepest nesting of arrays and objects in a JSON body or notification frame; deeper is refused (400 JSON_TOO_DEEP, or an `error` message on a socket) before anything walks it recursively. Our own messages nest at most 3 deep',
  })
  @IsIntInRange(4, 512)
  API_JSON_MAX_DEPTH = 32;

  @EnvVar({
    description: 'Heartbeats arriving together share one transaction: at most this many in one',
  })
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
      "Wait for a heartbeat transaction's WAL to reach the disk before answering (true or false). False: a crash of PostgreSQL may forget the last fraction of a second of heartbeats, which only makes their tickets look that much older (far inside TICKET_HEARTBEAT_TIMEOUT_MS); their idempotency answers go with them, so a retry runs again",
  })
  @IsFlag()
  HEARTBEAT_SYNCHRONOUS_COMMIT = false;

  @EnvVar({
    description:
      "Answer a searching ticket's heartbeat from Redis (the liveness store; maintenance checkpoints the beats into PostgreSQL every TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS) rather than with a PostgreSQL transaction of its own (true or false). Either way a ticket Redis cannot answer for goes to PostgreSQL",
  })
  @IsFlag()
  TICKET_LIVENESS_IN_REDIS = true;

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
      "Requests one player session may make on player routes (queue, probes, matches) per window; 0: no limit. Default 600 a minute: 100 times the SDK's heartbeat cadence",
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
      'Requests one client address may make on player, server and operator console routes per window, whatever the credential (a flood of made-up tokens included); 0: no limit. Default 120,000 a minute: thousands of players behind one NAT',
  })
  @IsIntInRange(0, 100_000_000)
  API_RATE_LIMIT_REQUESTS_PER_ADDRESS = 120_000;

  @EnvVar({
    description:
      'Operator console logins (POST /admin/login) one client address may attempt per window; 0: no limit. Guessing an operator token is hopeless, this keeps it quiet',
  })
  @IsIntInRange(0, 10_000_000)
  API_RATE_LIMIT_OPERATOR_LOGINS_PER_ADDRESS = 20;

  @EnvVar({
    description:
      "Key that signs the operator console's session cookies (HMAC-SHA256), at least 32 characters; give every API replica the same one. Unset: derived from OPERATOR_TOKENS, so changing the tokens also logs every console session out",
    secret: true,
  })
  @IsOptional()
  @IsString()
  @MinLength(32)
  OPERATOR_CONSOLE_SECRET?: string = undefined;

  @EnvVar({
    description:
      'true: the operator console is usable over plain HTTP (a LAN without TLS): the security headers drop upgrade-insecure-requests and HSTS, which would send its stylesheet and forms to https. Keep false wherever TLS is available',
  })
  @IsFlag()
  OPERATOR_CONSOLE_PLAIN_HTTP = false;

  @EnvVar({
    description: 'Lifetime of an operator console session (s); the operator logs in again after it',
  })
  @IsIntInRange(60, 86_400)
  OPERATOR_CONSOLE_SESSION_SECONDS = 1_800;

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

  @EnvVar({
    description: 'JWT players: JWKS URL of the identity provider (or PLAYER_JWT_JWKS_FILE)',
  })
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

  @EnvVar({
    description:
      'A match whose no-shows leave some team with fewer connected players than this fails (NO_SHOW) at initial connect; otherwise it goes on without them',
  })
  @IsIntInRange(1, 64)
  MATCH_MIN_CONNECTED_PER_TEAM = 1;
}
