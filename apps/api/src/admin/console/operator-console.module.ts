import { Module } from '@nestjs/common';
import { AllocationModule } from '@matchplane/allocation';
import { MatchesModule } from '@matchplane/matches';
import { AuditModule } from '@matchplane/persistence';
import { PlayerRatingsModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { DeadLetterToolsModule } from '../dead-letter-tools.module';
import { ConsoleHttpSetup } from './console-http.setup';
import { ConsoleLoginController } from './console-login.controller';
import { ConsoleSessions } from './console-session';
import { ConsoleController } from './console.controller';
import { ConsoleGuard } from './console.guard';

/** The operator console under /admin: server-rendered pages and Bull Board, behind a console session. */
@Module({
  imports: [
    DeadLetterToolsModule,
    AuditModule,
    MatchesModule,
    AllocationModule,
    TicketsModule,
    PlayerRatingsModule,
  ],
  controllers: [ConsoleLoginController, ConsoleController],
  providers: [ConsoleSessions, ConsoleGuard, ConsoleHttpSetup],
})
export class OperatorConsoleModule {}
