import { Module } from '@nestjs/common';
import { AllocationModule } from '@matchplane/allocation';
import { MatchesModule } from '@matchplane/matches';
import { PlayerRatingsModule } from '@matchplane/players';
import { MatchHistoryController } from './match-history.controller';
import { MatchHistoryService } from './match-history.service';

/** GET /v1/matches/history: a player's own finished matches. */
@Module({
  imports: [MatchesModule, AllocationModule, PlayerRatingsModule],
  controllers: [MatchHistoryController],
  providers: [MatchHistoryService],
})
export class MatchHistoryModule {}
