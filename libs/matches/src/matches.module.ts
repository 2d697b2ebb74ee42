import { Module } from '@nestjs/common';
import { OutboxModule } from '@matchplane/outbox';
import { MatchStore } from './match.store';

/** Owns `matches` and `match_participants`; other modules change matches only through MatchStore. */
@Module({
  imports: [OutboxModule.forWriters()],
  providers: [MatchStore],
  exports: [MatchStore],
})
export class MatchesModule {}
