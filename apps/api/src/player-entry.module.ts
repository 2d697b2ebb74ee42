import { Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import type { ApiConfig } from './api.config';
import {
  JwtIdentityVerifier,
  PlayersModule,
  type PlayerIdentityVerifier,
} from '@matchplane/players';
import { PgProbeRecorder } from './probes/pg-probe.recorder';
import type { ProbeRecorder } from './probes/probe.recorder';
import { ProbeMeasurementKeys } from './probes/probe-measurement.keys';
import { ProbesModule } from './probes/probes.module';
import { LobbiesModule } from './lobbies/lobbies.module';
import { QueueModule } from './queue/queue.module';
import { SessionRevocationsModule } from './sessions/session-revocations.module';
import { SessionsController } from './sessions/sessions.controller';

export interface PlayerEntryOptions {
  /** Identity verifiers besides the guest one (e.g. the JWT verifier, a studio's own). */
  readonly verifiers?: readonly (Type<PlayerIdentityVerifier> | PlayerIdentityVerifier)[];
  /** Modules providing what those verifier classes inject. */
  readonly verifierImports?: ModuleMetadata['imports'];
  /** Default PgProbeRecorder; null leaves probing unconfigured (the probe routes answer 503). */
  readonly probeRecorder?: Type<ProbeRecorder> | null;
}

/** How a player gets into the queue: sessions, latency probes and queue tickets. */
@Module({})
export class PlayerEntryModule {
  static forRoot(config: ApiConfig, options: PlayerEntryOptions = {}): DynamicModule {
    // Configured by PLAYER_JWT_*; a half-configured provider throws here, so the API refuses to start.
    const jwt = JwtIdentityVerifier.fromConfig(config);
    const verifiers = [...(jwt ? [jwt] : []), ...(options.verifiers ?? [])];
    return {
      module: PlayerEntryModule,
      imports: [
        PlayersModule.forRoot({
          ttlSeconds: config.SESSION_TTL_SECONDS,
          sessionCache: {
            ttlMs: config.SESSION_CACHE_TTL_MS,
            maxEntries: config.SESSION_CACHE_MAX_ENTRIES,
          },
          verifiers,
          imports: options.verifierImports ?? [],
        }),
        ProbesModule.forRoot({
          recorder: options.probeRecorder === undefined ? PgProbeRecorder : options.probeRecorder,
          // Read here, before Nest boots: an unusable PROBE_KEYS_FILE stops the API in one line.
          measurementKeys: ProbeMeasurementKeys.load(config),
        }),
        QueueModule,
        LobbiesModule,
        SessionRevocationsModule,
      ],
      controllers: [SessionsController],
    };
  }
}
