import { Module, type DynamicModule } from '@nestjs/common';
import { AuditModule } from '@matchplane/persistence';
import { PlayerBlocksModule, PlayerRatingsModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import { DeadLetterToolsModule } from './dead-letter-tools.module';
import { OperatorConsoleModule } from './console/operator-console.module';
import { DeadLettersController } from './dead-letters.controller';
import { OperatorGuard } from './operator.guard';
import { OutboxStatsController } from './outbox-stats.controller';
import { QueueArrivalsController } from './queue-arrivals.controller';
import { QueueCaptureAdmin } from './queue-capture.admin';
import { PlayerRatingsAdmin } from './player-ratings.admin';
import { RatingsController } from './ratings.controller';
import { LiveOpsModule } from './live-ops/live-ops.module';
import { QueueControlsController } from './live-ops/queue-controls.controller';
import { MatchControlsController } from './live-ops/match-controls.controller';
import { MatchControlsModule } from './live-ops/match-controls.module';
import { PlayerPenaltiesController } from './live-ops/player-penalties.controller';
import { RuleSetsAdminModule } from './rule-sets/rule-sets.module';
import { RuleSetsController } from './rule-sets/rule-sets.controller';

/**
 * Operator routes under /v1/admin and /api/v1/admin, every one behind {@link OperatorGuard}, and
 * the operator console under /admin (OperatorConsoleModule).
 */
@Module({})
export class AdminModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        DeadLetterToolsModule,
        OperatorConsoleModule.forRoot(config),
        PlayerRatingsModule,
        PlayerBlocksModule,
        AuditModule,
        LiveOpsModule.forRoot(config),
        MatchControlsModule,
        RuleSetsAdminModule,
        TicketsModule,
      ],
      controllers: [
        DeadLettersController,
        OutboxStatsController,
        RatingsController,
        QueueControlsController,
        MatchControlsController,
        PlayerPenaltiesController,
        QueueArrivalsController,
        RuleSetsController,
      ],
      providers: [
        { provide: ApiConfig, useValue: config },
        OperatorGuard,
        PlayerRatingsAdmin,
        QueueCaptureAdmin,
      ],
    };
  }
}
