import { Module, type DynamicModule } from '@nestjs/common';
import type { ServiceConfig } from '@matchplane/config';
import { AllocationModule } from '@matchplane/allocation';
import { MatchesModule } from '@matchplane/matches';
import { AuditModule } from '@matchplane/persistence';
import { PlayerRatingsModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { DeadLetterToolsModule } from '../dead-letter-tools.module';
import { LiveOpsModule } from '../live-ops/live-ops.module';
import { MatchControlsModule } from '../live-ops/match-controls.module';
import { ConsoleHttpSetup } from './console-http.setup';
import { ConsoleLoginController } from './console-login.controller';
import { ConsoleSessions } from './console-session';
import { ConsoleController } from './console.controller';
import { ConsoleGuard } from './console.guard';
import { LiveOpsConsoleController } from './live-ops.console.controller';
import { RuleSetsAdminModule } from '../rule-sets/rule-sets.module';
import { RuleSetsConsoleController } from './rule-sets.console.controller';

/** The operator console under /admin: server-rendered pages and Bull Board, behind a console session. */
@Module({})
export class OperatorConsoleModule {
  static forRoot(config: Pick<ServiceConfig, 'QUEUE_MODES' | 'PROBE_REGIONS'>): DynamicModule {
    return {
      module: OperatorConsoleModule,
      imports: [
        DeadLetterToolsModule,
        AuditModule,
        MatchesModule,
        AllocationModule,
        TicketsModule,
        PlayerRatingsModule,
        LiveOpsModule.forRoot(config),
        MatchControlsModule,
        RuleSetsAdminModule,
      ],
      controllers: [
        ConsoleLoginController,
        ConsoleController,
        LiveOpsConsoleController,
        RuleSetsConsoleController,
      ],
      providers: [ConsoleSessions, ConsoleGuard, ConsoleHttpSetup],
    };
  }
}
