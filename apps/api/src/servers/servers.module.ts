import { Module } from '@nestjs/common';
import { AllocationModule } from '@matchplane/allocation';
import { MatchesModule } from '@matchplane/matches';
import { OutboxModule } from '@matchplane/outbox';
import { PlayerRatingsModule } from '@matchplane/players';
import { TicketsModule } from '@matchplane/tickets';
import { ServerCredentialGuard } from './server-credential.guard';
import { ServerLifecycleService } from './server-lifecycle.service';
import { ServerBackfillService } from './server-backfill.service';
import { ServerPresenceService } from './server-presence.service';
import { ServerRegistrationService } from './server-registration.service';
import { ServerRouteMetrics } from './server-route.metrics';
import { ServerRouteTransactions } from './server-route.transactions';
import { ServersController } from './servers.controller';

/** Game-server routes: register, roster, initial connect, presence, backfill and result, under the workload credential. */
@Module({
  imports: [
    AllocationModule,
    MatchesModule,
    TicketsModule,
    PlayerRatingsModule,
    OutboxModule.forWriters(),
  ],
  controllers: [ServersController],
  providers: [
    ServerCredentialGuard,
    ServerRegistrationService,
    ServerLifecycleService,
    ServerBackfillService,
    ServerPresenceService,
    ServerRouteMetrics,
    ServerRouteTransactions,
  ],
})
export class ServersModule {}
