import { Module } from '@nestjs/common';
import { PlayerBlocksModule } from '@matchplane/players';
import { AvoidsController } from './avoids.controller';
import { BlocksController } from './blocks.controller';
import { BlockListService } from './block-list.service';

/** Block and avoid list routes over libs/players' PlayerBlocks (which owns `player_blocks`). */
@Module({
  imports: [PlayerBlocksModule],
  controllers: [BlocksController, AvoidsController],
  providers: [BlockListService],
})
export class BlocksModule {}
