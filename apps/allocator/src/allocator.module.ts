import {
  Module,
  type DynamicModule,
  type ModuleMetadata,
  type Provider,
  type Type,
} from '@nestjs/common';
import { AllocatorConfig } from './allocator.config';
import { AllocationModule } from '@matchplane/allocation';
import { JoinTokenSigner } from '@matchplane/join-auth';
import { MatchesModule } from '@matchplane/matches';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { TicketsModule } from '@matchplane/tickets';
import { staticPool } from './allocation-regions';
import { AllocationMetrics } from './allocation.metrics';
import { AllocationReleaseWorker } from './allocation-release.worker';
import { AllocationStepHook } from './allocation-step.hook';
import { AllocationService } from './allocation.service';
import { AllocationWorker } from './allocation.worker';
import { JoinKeyMetrics } from './join-key.metrics';
import { loadJoinSigner } from './join-keys.loader';
import { AgonesProvider } from './providers/agones.provider';
import { BackfillPublisher } from './backfill-publisher';
import { RejoinTokenIssuer } from './rejoin-token.issuer';
import { ServerHealthWatcher } from './server-health.watcher';
import { AllocationProvider } from './providers/allocation.provider';
import { LocalProvider } from './providers/local.provider';
import { StaticProvider } from './providers/static.provider';
import { HttpStaticHandOff, StaticHandOff } from './providers/static-handoff';

function providerFor(config: AllocatorConfig): Provider[] {
  const use = (implementation: Type<AllocationProvider>): Provider => ({
    provide: AllocationProvider,
    useClass: implementation,
  });
  switch (config.ALLOCATION_PROVIDER) {
    case 'local':
      return [use(LocalProvider)];
    case 'static':
      // A malformed pool refuses the start here rather than at the first match.
      staticPool(config);
      return [use(StaticProvider), { provide: StaticHandOff, useClass: HttpStaticHandOff }];
    case 'agones':
      return [use(AgonesProvider)];
  }
}

export interface AllocatorOptions {
  /** A studio's own provider, bound in place of ALLOCATION_PROVIDER's (docs/EXTENDING.md). */
  readonly provider?: Type<AllocationProvider>;
  /** Modules providing what that provider injects. */
  readonly imports?: ModuleMetadata['imports'];
}

@Module({})
export class AllocatorModule {
  /**
   * Throws (so the allocator refuses to start) without usable key material: it could only
   * strand every match it picked up.
   */
  static forRoot(config: AllocatorConfig, options: AllocatorOptions = {}): DynamicModule {
    const signer = loadJoinSigner(config);
    return {
      module: AllocatorModule,
      imports: [
        ServiceRuntimeModule.forWorker(config, { appName: 'allocator' }),
        MatchesModule,
        TicketsModule,
        AllocationModule,
        ...(options.imports ?? []),
      ],
      providers: [
        { provide: AllocatorConfig, useValue: config },
        { provide: JoinTokenSigner, useValue: signer },
        ...(options.provider
          ? [{ provide: AllocationProvider, useClass: options.provider }]
          : providerFor(config)),
        AllocationStepHook,
        AllocationMetrics,
        AllocationService,
        BackfillPublisher,
        RejoinTokenIssuer,
        AllocationWorker,
        AllocationReleaseWorker,
        ServerHealthWatcher,
        JoinKeyMetrics,
      ],
    };
  }
}
