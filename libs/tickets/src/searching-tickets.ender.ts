import { DomainError, type TicketCommand } from '@matchplane/domain';
import { itemFailure, type ItemFailure, type UnitOfWork } from '@matchplane/persistence';
import type { StoredTicket, TicketStore } from './ticket.store';

/**
 * Ends each claimed ticket still SEARCHING with `own(ticket)` (undefined: left alone), its
 * searching party mates with `mates`, through the state machine, in `unit`'s transaction (the
 * store takes the ended tickets out of the candidate projection once it commits). A domain refusal is that item's
 * failure and the batch goes on (the domain refuses before any SQL is sent).
 */
export async function endClaimedSearching(
  unit: UnitOfWork,
  tickets: TicketStore,
  claimed: readonly string[],
  own: (ticket: StoredTicket) => TicketCommand | undefined,
  mates: TicketCommand,
  now: Date,
): Promise<{ ended: StoredTicket[]; failures: ItemFailure[] }> {
  const ended: StoredTicket[] = [];
  const failures: ItemFailure[] = [];
  for (const id of claimed) {
    const current = await tickets.load(unit.manager, id);
    const command = current?.state === 'SEARCHING' ? own(current) : undefined;
    if (!current || !command) continue;
    try {
      ended.push(...(await tickets.endWithParty(unit, current, command, mates, now)));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failures.push(itemFailure(id, error));
    }
  }
  return { ended, failures };
}
