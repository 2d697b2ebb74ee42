import { Module } from '@nestjs/common';
import { PlayerBlocksModule } from '@matchplane/players';
import { BlocksController } from './blocks.controller';
import { BlockListService } from './block-list.service';

/** Block list routes over libs/players' PlayerBlocks (which owns `player_blocks`). */
@Module({
  imports: [PlayerBlocksModule],
  controllers: [BlocksController],
  providers: [BlockListService],
})
export class BlocksModule {}
