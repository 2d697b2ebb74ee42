import { Module } from '@nestjs/common';
import { IdempotencyModule } from '@matchplane/idempotency';
import { LatenciesModule } from '@matchplane/latency';
import { MatchesModule } from '@matchplane/matches';
import { PlayerStoreModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { QueueAdmission } from '../queue/queue-admission';
import { QueuePolicyModule } from '../queue/queue-policy.module';
import { LobbiesController } from './lobbies.controller';
import { LobbyStarter } from './lobby-starter';
import { LobbyService } from './lobby.service';
import { LobbyStore } from './lobby.store';

/** Owns `lobbies` and `lobby_members`; a start creates its match through MatchStore. */
@Module({
  imports: [
    TicketsModule,
    MatchesModule,
    PlayerStoreModule,
    IdempotencyModule,
    LatenciesModule,
    QueuePolicyModule,
  ],
  controllers: [LobbiesController],
  providers: [LobbyStore, LobbyService, LobbyStarter, QueueAdmission],
})
export class LobbiesModule {}
