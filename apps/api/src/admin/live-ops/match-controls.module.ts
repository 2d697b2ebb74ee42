import { Module } from '@nestjs/common';
import { MatchesModule } from '@matchplane/matches';
import { AuditModule } from '@matchplane/persistence';
import { TicketsModule } from '@matchplane/tickets';
import { MatchControlsAdmin } from './match-controls.admin';

/** Cancel a match, release a player's tickets: for the admin routes and the console. */
@Module({
  imports: [MatchesModule, TicketsModule, AuditModule],
  providers: [MatchControlsAdmin],
  exports: [MatchControlsAdmin],
})
export class MatchControlsModule {}
