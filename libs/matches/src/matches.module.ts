import { Module } from '@nestjs/common';
import { OutboxModule } from '@matchplane/outbox';
import { PlayerStoreModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { MatchLifecycle } from './match-lifecycle.service';
import { MatchStore } from './match.store';
import { BackfillStore } from './backfill.store';
import { MatchHistoryReader } from './match-history.reader';
import { ReadyCheck } from './ready-check.service';
import { MatchPresenceService } from './match-presence.service';

/**
 * Owns `matches`, `match_participants` and `backfill_requests`; other modules change matches only through MatchStore,
 * and end them through MatchLifecycle (which moves the tickets with them).
 */
@Module({
  imports: [OutboxModule.forWriters(), TicketsModule, PlayerStoreModule],
  providers: [
    MatchStore,
    MatchLifecycle,
    BackfillStore,
    MatchHistoryReader,
    ReadyCheck,
    MatchPresenceService,
  ],
  exports: [
    MatchStore,
    MatchLifecycle,
    BackfillStore,
    MatchHistoryReader,
    ReadyCheck,
    MatchPresenceService,
  ],
})
export class MatchesModule {}
