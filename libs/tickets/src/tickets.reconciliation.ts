import { Injectable, Logger, Module } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  cutoff,
  ReconcilesLifecycle,
  type ReconciliationContribution,
  type ReconciliationStage,
} from '@matchplane/persistence';
import type { TicketReconciliationOptions } from './ticket-reconciliation.options';
import { SearchTimeoutStage } from './search-timeout.stage';
import { SearchingTicketsStage, type ClaimedSearching } from './searching-tickets.ender';
import { TicketLiveness } from './ticket-liveness';
import { TicketStore, type RecordedBeat } from './ticket.store';
import { TicketsModule } from './tickets.module';

/**
 * Expires searching tickets that missed their heartbeats, a batch per short transaction, each
 * through the ticket state machine (TicketStore.transition, so the domain's own heartbeat check
 * runs and the `ticket.state_changed` event is written with it). A party member's expiry expires
 * its party's other searching tickets with it (PARTY_MEMBER_EXPIRED), one event each, in the same
 * transaction. After commit the tickets leave the candidate projection and the relay is woken.
 *
 * A ticket silent by its row may be beating through Redis (TicketLiveness) since the last
 * checkpoint: the store is consulted first, and a ticket beaten within the timeout gets its beat
 * written (a checkpoint of its own) instead of expiring. With Redis unreachable, the rows decide:
 * they are at most a checkpoint interval behind, and heartbeats then go to PostgreSQL itself.
 */
export class TicketExpiryStage extends SearchingTicketsStage {
  private readonly logger = new Logger(TicketExpiryStage.name);

  constructor(
    dataSource: DataSource,
    tickets: TicketStore,
    private readonly liveness: TicketLiveness,
    private readonly options: Pick<TicketReconciliationOptions, 'batchSize' | 'heartbeatTimeoutMs'>,
  ) {
    // SEARCHING, no heartbeat within TICKET_HEARTBEAT_TIMEOUT_MS: EXPIRED. First in a round: a
    // ticket expires before any match stage looks at its player. A silent party member takes its
    // whole party out of the queue, mates included.
    super('expired_tickets', 'ticket_heartbeat_timeout', 10, dataSource, tickets, {
      to: 'EXPIRED',
      reason: 'PARTY_MEMBER_EXPIRED',
    });
  }

  protected async claim(
    manager: EntityManager,
    now: Date,
    skip: ReadonlySet<string>,
  ): Promise<ClaimedSearching> {
    const { batchSize, heartbeatTimeoutMs } = this.options;
    const silentSince = cutoff(now, heartbeatTimeoutMs);
    const locked = await this.tickets.lockSilent(manager, silentSince, batchSize, [...skip]);
    const alive = await this.beatenSince(locked, silentSince);
    await this.tickets.checkpointHeartbeats(manager, alive);
    return {
      taken: locked.length,
      ids: locked.filter((id) => !alive.has(id)),
      own: () => ({ to: 'EXPIRED', heartbeatTimeoutMs }),
    };
  }

  /** The tickets among `ids` that Redis saw beat since `since`, with their last beats. */
  private async beatenSince(
    ids: readonly string[],
    since: Date,
  ): Promise<Map<string, RecordedBeat>> {
    let beats: Map<string, RecordedBeat>;
    try {
      beats = await this.liveness.recordedBeats(ids);
    } catch (error) {
      this.logger.warn(`liveness not read, expiring by the rows: ${(error as Error).message}`);
      return new Map();
    }
    return new Map([...beats].filter(([, beat]) => beat.at.getTime() >= since.getTime()));
  }
}

/** Tickets' reconciliation, for the maintenance app to discover. */
@ReconcilesLifecycle()
@Injectable()
export class TicketReconciliation implements ReconciliationContribution<TicketReconciliationOptions> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tickets: TicketStore,
    private readonly liveness: TicketLiveness,
  ) {}

  reconciliationStages(options: TicketReconciliationOptions): readonly ReconciliationStage[] {
    return [
      new TicketExpiryStage(this.dataSource, this.tickets, this.liveness, options),
      new SearchTimeoutStage(this.dataSource, this.tickets, options),
    ];
  }
}

@Module({ imports: [TicketsModule], providers: [TicketReconciliation] })
export class TicketReconciliationModule {}
