import { Module } from '@nestjs/common';
import { AllocationStore } from './allocation.store';
import { ReportedResults } from './reported-results.store';
import { RosterStore } from './roster.store';
import { RejoinTokenStore } from './rejoin-token.store';
import { ServerHeartbeatStore } from './server-heartbeat.store';

/**
 * Owns `allocations`, `assignments` and `roster_manifests`; the allocator writes them, the
 * game-server routes read and advance them, both only through these stores.
 */
@Module({
  providers: [
    AllocationStore,
    RosterStore,
    ReportedResults,
    ServerHeartbeatStore,
    RejoinTokenStore,
  ],
  exports: [AllocationStore, RosterStore, ReportedResults, ServerHeartbeatStore, RejoinTokenStore],
})
export class AllocationModule {}
