import { Logger } from '@nestjs/common';
import { loadConfigOrExit } from '@matchplane/config';
import { bootstrapWorker } from '@matchplane/observability';
import { AllocatorConfig } from '../../allocator/src/allocator.config';
import { AllocatorModule } from '../../allocator/src/allocator.module';
import { ApiConfig } from '../../api/src/api.config';
import { ApiModule } from '../../api/src/api.module';
import { serveApi } from '../../api/src/http/serve-api';
import { DispatcherConfig } from '../../dispatcher/src/dispatcher.config';
import { DispatcherModule } from '../../dispatcher/src/dispatcher.module';
import { MatcherConfig } from '../../matcher/src/matcher.config';
import { MatcherModule } from '../../matcher/src/matcher.module';
import { clanMatchingFunction, StudioClansModule } from './studio-clans.module';
import { fleetServers, StudioFleetConfig } from './studio-fleet.config';
import { StudioFleetModule, StudioFleetProvider } from './studio-fleet.module';
import { StudioIdentityModule, StudioIdentityVerifier } from './studio-identity.module';
import { StudioWebhookConfig, StudioWebhookModule } from './studio-webhook.module';

/*
 * A studio's deployment of Matchplane: the stock apps' root modules, each booted with the studio's
 * modules the way docs/EXTENDING.md plugs them in. Each role is one process, like the stock app it
 * replaces; the maintenance app and the game server need nothing of the studio and run as shipped.
 */

export const ROLES = ['api', 'matcher', 'allocator', 'dispatcher'] as const;
export type StudioRole = (typeof ROLES)[number];

/** The API with the studio's identity provider next to the built-in ones. */
async function api(): Promise<void> {
  const config = loadConfigOrExit(ApiConfig, 'studio api');
  await serveApi(
    () =>
      ApiModule.forRoot(config, {
        playerEntry: {
          verifiers: [StudioIdentityVerifier],
          verifierImports: [StudioIdentityModule],
        },
      }),
    config,
    'studio api',
  );
}

/** The matcher with the studio's rule keeping clanmates apart. */
async function matcher(): Promise<void> {
  const config = loadConfigOrExit(MatcherConfig, 'studio matcher');
  await bootstrapWorker(
    MatcherModule.forRoot(config, {
      imports: [StudioClansModule],
      matchingFunction: clanMatchingFunction,
    }),
    'matcher',
    config,
  );
}

/**
 * The allocator placing matches on the studio's own fleet. Its fleet agent here only logs what it
 * would tell a server: a studio calls its real agent there (never logging the credential).
 */
async function allocator(): Promise<void> {
  const config = loadConfigOrExit(AllocatorConfig, 'studio allocator');
  const fleet = loadConfigOrExit(StudioFleetConfig, 'studio allocator');
  const agent = new Logger('StudioFleetAgent');
  await bootstrapWorker(
    AllocatorModule.forRoot(config, {
      provider: StudioFleetProvider,
      imports: [
        StudioFleetModule.register({
          servers: fleetServers(fleet),
          tell: (handOff) => {
            agent.log(`tell ${handOff.serverId}: match ${handOff.matchId}`);
            return Promise.resolve();
          },
          reset: (serverId, matchId) => {
            agent.log(`reset ${serverId}: match ${matchId} is over without it`);
            return Promise.resolve();
          },
        }),
      ],
    }),
    'allocator',
    config,
  );
}

/** The dispatcher also POSTing every match state change to the studio's webhook. */
async function dispatcher(): Promise<void> {
  const config = loadConfigOrExit(DispatcherConfig, 'studio dispatcher');
  const webhook = loadConfigOrExit(StudioWebhookConfig, 'studio dispatcher');
  await bootstrapWorker(
    DispatcherModule.forRoot(config, [StudioWebhookModule.register(webhook)]),
    'dispatcher',
    config,
  );
}

export function bootRole(role: StudioRole): Promise<void> {
  switch (role) {
    case 'api':
      return api();
    case 'matcher':
      return matcher();
    case 'allocator':
      return allocator();
    case 'dispatcher':
      return dispatcher();
  }
}
