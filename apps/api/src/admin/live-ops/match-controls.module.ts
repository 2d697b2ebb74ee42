import { Module } from '@nestjs/common';
import { MatchesModule } from '@matchplane/matches';
import { AuditModule } from '@matchplane/persistence';
import { PlayerStoreModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { MatchControlsAdmin } from './match-controls.admin';
import { PlayerPenaltiesAdmin } from './player-penalties.admin';

/**
 * Cancel a match, release a player's tickets, lift a player's cooldown: for the admin routes and
 * the console.
 */
@Module({
  imports: [MatchesModule, TicketsModule, PlayerStoreModule, AuditModule],
  providers: [MatchControlsAdmin, PlayerPenaltiesAdmin],
  exports: [MatchControlsAdmin, PlayerPenaltiesAdmin],
})
export class MatchControlsModule {}
