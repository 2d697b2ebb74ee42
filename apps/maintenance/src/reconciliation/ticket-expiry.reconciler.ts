import type { DataSource } from 'typeorm';
import { DomainError, type TicketCommand } from '@matchplane/domain';
import { runInTransaction } from '@matchplane/persistence';
import type { CandidateProjection, TicketStore, StoredTicket } from '@matchplane/tickets';
import {
  boundTransaction,
  cutoff,
  itemFailure,
  type ItemFailure,
  type ReconciliationStage,
  type StageBatch,
} from './reconciliation-case';

/**
 * Expires searching tickets that missed their heartbeats, a batch per short transaction, each
 * through the ticket state machine (TicketStore.transition, so the domain's own heartbeat check
 * runs and the `ticket.state_changed` event is written with it). A party member's expiry expires
 * its party's other searching tickets with it (PARTY_MEMBER_EXPIRED), one event each, in the same
 * transaction. After commit the tickets leave the candidate projection and the relay is woken.
 */
export class TicketExpiryReconciler implements ReconciliationStage {
  readonly name = 'expired_tickets';

  constructor(
    private readonly dataSource: DataSource,
    private readonly tickets: TicketStore,
    private readonly projection: CandidateProjection,
    private readonly options: { batchSize: number; heartbeatTimeoutMs: number },
  ) {}

  async batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    const { batchSize, heartbeatTimeoutMs } = this.options;
    const { expired, taken, failures } = await runInTransaction(
      this.dataSource,
      async (manager) => {
        await boundTransaction(manager);
        const ids = await this.tickets.lockSilent(
          manager,
          cutoff(now, heartbeatTimeoutMs),
          batchSize,
          [...skip],
        );
        const done: StoredTicket[] = [];
        const refused: ItemFailure[] = [];
        for (const id of ids) {
          const current = await this.tickets.load(manager, id);
          if (!current || current.state !== 'SEARCHING') continue;
          try {
            // A silent party member takes its whole party out of the queue, mates included.
            const party = current.party
              ? await this.tickets.lockSearchingParty(manager, current.party.id)
              : [current];
            const { tickets } = await this.tickets.transitionMany(
              manager,
              party,
              (ticket): TicketCommand =>
                ticket.id === id
                  ? { to: 'EXPIRED', heartbeatTimeoutMs }
                  : { to: 'EXPIRED', reason: 'PARTY_MEMBER_EXPIRED' },
              now,
            );
            for (const ticket of tickets) {
              await this.projection.refreshAfterCommit(manager, ticket);
              done.push(ticket);
            }
          } catch (error) {
            // The domain refuses before any SQL is sent, so the batch's transaction is still good.
            if (!(error instanceof DomainError)) throw error;
            refused.push(itemFailure(id, error));
          }
        }
        return { expired: done, taken: ids.length, failures: refused };
      },
    );
    return {
      reconciled: { ticket_heartbeat_timeout: expired.length },
      taken,
      failures,
    };
  }
}
