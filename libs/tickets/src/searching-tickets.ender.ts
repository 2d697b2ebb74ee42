import type { EntityManager } from 'typeorm';
import { DomainError, type TicketCommand } from '@matchplane/domain';
import { itemFailure, type ItemFailure } from '@matchplane/persistence';
import type { CandidateProjection } from './candidate.projection';
import type { StoredTicket, TicketStore } from './ticket.store';

/**
 * Ends each claimed ticket still SEARCHING with `own(ticket)` (undefined: left alone), its
 * searching party mates with `mates`, through the state machine, in `manager`'s transaction; the
 * ended tickets leave the candidate projection once it commits. A domain refusal is that item's
 * failure and the batch goes on (the domain refuses before any SQL is sent).
 */
export async function endClaimedSearching(
  manager: EntityManager,
  stores: { tickets: TicketStore; projection: CandidateProjection },
  claimed: readonly string[],
  own: (ticket: StoredTicket) => TicketCommand | undefined,
  mates: TicketCommand,
  now: Date,
): Promise<{ ended: StoredTicket[]; failures: ItemFailure[] }> {
  const ended: StoredTicket[] = [];
  const failures: ItemFailure[] = [];
  for (const id of claimed) {
    const current = await stores.tickets.load(manager, id);
    const command = current?.state === 'SEARCHING' ? own(current) : undefined;
    if (!current || !command) continue;
    try {
      for (const ticket of await stores.tickets.endWithParty(
        manager,
        current,
        command,
        mates,
        now,
      )) {
        await stores.projection.refreshAfterCommit(manager, ticket);
        ended.push(ticket);
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failures.push(itemFailure(id, error));
    }
  }
  return { ended, failures };
}
