import { Module } from '@nestjs/common';
import { MatchesModule } from '@matchplane/matches';
import { ReadyCheckController } from './ready-check.controller';

/** POST /v1/matches/{id}/accept and /decline: the player's side of a ready check. */
@Module({ imports: [MatchesModule], controllers: [ReadyCheckController] })
export class ReadyCheckModule {}
