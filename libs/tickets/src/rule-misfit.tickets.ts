import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { runBoundedTransaction } from '@matchplane/persistence';
import { endClaimedSearching } from './searching-tickets.ender';
import { TicketStore, type StoredTicket } from './ticket.store';

/**
 * Ends searching tickets the active rule set version no longer takes (domain `ruleSetFit`):
 * CANCELLED RULES_CHANGED through the state machine, a party's other searching tickets with it
 * (PARTY_MEMBER_CANCELLED), one event each, so every player is told and may queue again under the
 * new rules (docs/decisions/2026-12-07-queued-tickets-under-a-new-rule-set.md).
 */
@Injectable()
export class RuleMisfitTickets {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tickets: TicketStore,
  ) {}

  /**
   * One short transaction: locks those of `ticketIds` still SEARCHING (a ticket another writer
   * holds is skipped: the next pass finds it again) and ends them. Answers every ticket ended.
   */
  end(ticketIds: readonly string[], now: Date): Promise<StoredTicket[]> {
    return runBoundedTransaction(this.dataSource, async (manager, unit) => {
      const locked = await this.tickets.lockSearching(manager, ticketIds);
      const { ended } = await endClaimedSearching(
        unit,
        this.tickets,
        locked.map((ticket) => ticket.id),
        () => ({ to: 'CANCELLED', reason: 'RULES_CHANGED' }),
        { to: 'CANCELLED', reason: 'PARTY_MEMBER_CANCELLED' },
        now,
      );
      return ended;
    });
  }
}
