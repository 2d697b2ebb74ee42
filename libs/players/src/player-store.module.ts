import { Module } from '@nestjs/common';
import { OutboxModule } from '@matchplane/outbox';
import { MatchRatingChanges } from './match-rating-changes.store';
import { PlayerRatings } from './player-ratings.service';
import { PlayerBlocks } from './player-blocks.store';
import { PlayerStore } from './player.store';

/**
 * PlayerStore alone, for modules that penalise players without serving sessions (MatchLifecycle
 * applies the no-show cooldown in the API and the maintenance app alike).
 */
@Module({ providers: [PlayerStore], exports: [PlayerStore] })
export class PlayerStoreModule {}

/** Players' ratings: the result route rates matches with it, the operator routes import and read. */
@Module({
  imports: [OutboxModule.forWriters()],
  providers: [PlayerRatings, MatchRatingChanges],
  exports: [PlayerRatings, MatchRatingChanges],
})
export class PlayerRatingsModule {}

/** Block lists: the API's block routes change them, the matcher reads them every pass. */
@Module({ providers: [PlayerBlocks], exports: [PlayerBlocks] })
export class PlayerBlocksModule {}
