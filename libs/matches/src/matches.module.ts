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

// Every service of the module is public: the stores and services are its ports.
const MATCH_SERVICES = [
  MatchStore,
  MatchLifecycle,
  BackfillStore,
  MatchHistoryReader,
  ReadyCheck,
  MatchPresenceService,
];

/**
 * Owns `matches`, `match_participants` and `backfill_requests`; other modules change matches only through MatchStore,
 * and end them through MatchLifecycle (which moves the tickets with them).
 */
@Module({
  imports: [OutboxModule.forWriters(), TicketsModule, PlayerStoreModule],
  providers: MATCH_SERVICES,
  exports: MATCH_SERVICES,
})
export class MatchesModule {}
