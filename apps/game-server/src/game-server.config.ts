import { IsNotEmpty, IsOptional, IsString, IsUrl, Matches, ValidateIf } from 'class-validator';
import {
  EnvVar,
  IsFlag,
  IsIntInRange,
  IsPort,
  LoggingConfig,
  serverHeartbeatTimeoutMs,
} from '@matchplane/config';

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

  @EnvVar({
    description: 'Address the game server (player WebSocket) and its health listener bind',
  })
  @IsString()
  @IsNotEmpty()
  HEALTH_HOST = '0.0.0.0';

  // 0 (an ephemeral port, logged) lets a local provider run many servers on one host.
  @EnvVar({
    description:
      'Port of the health/metrics listener (GET /health, GET /metrics); 0 picks a free one',
  })
  @IsIntInRange(0, 65535)
  HEALTH_PORT = 9105;

  @EnvVar({
    description: 'Server id the allocator assigned; required for a match (set by the provider)',
  })
  @ValidateIf((config: GameServerConfig) => GameServerConfig.matchAssigned(config))
  @Matches(/^\P{Cc}{1,255}$/u, { message: 'must be 1-255 characters without control characters' })
  MATCHPLANE_SERVER_ID?: string = undefined;

  @EnvVar({
    description:
      'Workload credential bound to the server id (Authorization: Bearer); required for a match',
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
      'How long the server keeps retrying registration, initial-connect and the result while the API cannot take them (unreachable, 5xx, 429), e.g. across a database restart (ms)',
  })
  @IsIntInRange(0, 3_600_000)
  REPORT_WAIT_MS = 120_000;

  @EnvVar({
    description:
      'After registering, how long players have to connect before initial-connect is reported (ms); reported earlier once every rostered player is connected',
  })
  @IsIntInRange(100, 600_000)
  CONNECT_DEADLINE_MS = 10_000;

  @EnvVar({ description: 'How long a connection may take to send its join message (ms)' })
  @IsIntInRange(100, 60_000)
  JOIN_HANDSHAKE_TIMEOUT_MS = 5_000;

  @EnvVar({
    description:
      'When initial-connect leaves a team short (no-shows), ask the control plane to backfill its open slots from the queue while the match plays (true or false)',
  })
  @IsFlag()
  BACKFILL_ON_NO_SHOW = true;

  @EnvVar({
    description:
      'How long the matcher may search for backfill players before the request expires (s)',
  })
  @IsIntInRange(1, 300)
  BACKFILL_TIMEOUT_SECONDS = 30;

  @EnvVar({ description: 'Interval at which a backfill request is polled until published (ms)' })
  @IsIntInRange(50, 60_000)
  BACKFILL_POLL_MS = 250;

  @EnvVar({ description: 'Length of the (trivial) match the reference server plays (ms)' })
  @IsIntInRange(0, 3_600_000)
  MATCH_DURATION_MS = 2_000;

  // The control plane's (maintenance) value: only the default heartbeat interval derives from it.
  @serverHeartbeatTimeoutMs()
  SERVER_HEARTBEAT_TIMEOUT_MS = 10_000;

  @EnvVar({
    description:
      'Interval of the server heartbeats, from before registering until the match ends (ms); default a third of SERVER_HEARTBEAT_TIMEOUT_MS, so two may be lost',
  })
  @IsOptional()
  @IsIntInRange(100, 200_000)
  SERVER_HEARTBEAT_INTERVAL_MS?: number = undefined;

  static heartbeatIntervalMs(config: GameServerConfig): number {
    return (
      config.SERVER_HEARTBEAT_INTERVAL_MS ?? Math.floor(config.SERVER_HEARTBEAT_TIMEOUT_MS / 3)
    );
  }

  @EnvVar({ description: 'Interval of the tick messages sent to players during the match (ms)' })
  @IsIntInRange(10, 60_000)
  MATCH_TICK_INTERVAL_MS = 500;
}
