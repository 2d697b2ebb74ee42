import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ApiConfig } from './api.config';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { AdminModule } from './admin/admin.module';
import { AssignmentsModule } from './assignments/assignments.module';
import { ReadyCheckModule } from './acceptance/ready-check.module';
import { MatchHistoryModule } from './history/match-history.module';
import { ThrottlingModule } from './http/throttling.module';
import { NotificationsModule } from './notifications/notifications.module';
import { PlayerEntryModule, type PlayerEntryOptions } from './player-entry.module';
import { ServersModule } from './servers/servers.module';
import { BlocksModule } from './blocks/blocks.module';
import { RuleSetsModule } from '@matchplane/rule-sets';

/** The API's own configuration for every module of the app. */
@Global()
@Module({})
class ApiConfigModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: ApiConfigModule,
      providers: [{ provide: ApiConfig, useValue: config }],
      exports: [ApiConfig],
    };
  }
}

export interface ApiModuleOptions {
  readonly playerEntry?: PlayerEntryOptions;
}

@Module({})
export class ApiModule {
  static forRoot(config: ApiConfig, options: ApiModuleOptions = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ApiConfigModule.forRoot(config),
        ServiceRuntimeModule.forApi(config, {
          appName: 'api',
          persistence: { lockTimeoutMs: config.API_LOCK_TIMEOUT_MS },
        }),
        ThrottlingModule.forRoot(config),
        // Tickets are checked against the active rule set's modes and attributes.
        RuleSetsModule.forRoot({
          base: {
            QUEUE_MODES: config.QUEUE_MODES,
            QUEUE_MODE_ATTRIBUTES: config.QUEUE_MODE_ATTRIBUTES,
          },
          pollIntervalMs: config.RULE_SET_POLL_INTERVAL_MS,
        }),
        AdminModule.forRoot(config),
        PlayerEntryModule.forRoot(config, options.playerEntry),
        ServersModule,
        AssignmentsModule,
        ReadyCheckModule,
        MatchHistoryModule,
        BlocksModule,
        NotificationsModule.forRoot(config),
      ],
    };
  }
}
