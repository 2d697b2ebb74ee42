import { Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import { GuestIdentityVerifier } from './guest-identity.verifier';
import { PLAYER_IDENTITY_VERIFIERS, type PlayerIdentityVerifier } from './player-identity.verifier';
import { PlayerStore } from './player.store';
import { SESSION_OPTIONS, SessionService, type SessionOptions } from './session.service';
import { SessionStore } from './session.store';
import { SESSION_CACHE_OPTIONS, SessionCache, type SessionCacheOptions } from './session-cache';

export interface PlayersModuleOptions extends SessionOptions {
  /**
   * Verifiers besides the built-in guest one: classes (resolved by DI, so a studio's verifier
   * can inject its own services) or ready instances (e.g. a JWT verifier built from config).
   */
  readonly verifiers?: readonly (Type<PlayerIdentityVerifier> | PlayerIdentityVerifier)[];
  /** Modules whose exported providers the verifier classes inject (a studio's own services). */
  readonly imports?: ModuleMetadata['imports'];
  /** Live sessions kept in process (absent: none, every request looks its session up). */
  readonly sessionCache?: SessionCacheOptions;
}

/** Owns `players` and `sessions`. */
@Module({})
export class PlayersModule {
  static forRoot(options: PlayersModuleOptions): DynamicModule {
    const extras = options.verifiers ?? [];
    const classes = extras.filter(
      (v): v is Type<PlayerIdentityVerifier> => typeof v === 'function',
    );
    const instances = extras.filter((v): v is PlayerIdentityVerifier => typeof v !== 'function');
    return {
      module: PlayersModule,
      imports: [...(options.imports ?? [])],
      // Global: PlayerAuthGuard guards routes in many modules and needs SessionService in each.
      global: true,
      providers: [
        PlayerStore,
        SessionStore,
        SessionService,
        SessionCache,
        {
          provide: SESSION_CACHE_OPTIONS,
          useValue: options.sessionCache ?? { ttlMs: 0, maxEntries: 1 },
        },
        GuestIdentityVerifier,
        ...classes,
        { provide: SESSION_OPTIONS, useValue: { ttlSeconds: options.ttlSeconds } },
        {
          provide: PLAYER_IDENTITY_VERIFIERS,
          inject: [GuestIdentityVerifier, ...classes],
          useFactory: (...resolved: PlayerIdentityVerifier[]) => [...resolved, ...instances],
        },
      ],
      // SessionCache: whoever holds the revocation subscription tells it what it hears.
      exports: [PlayerStore, SessionService, SessionCache],
    };
  }
}
