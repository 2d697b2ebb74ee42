import type { PlayerClient } from '@matchplane/sdk';
import type { TicketResponse } from '@matchplane/contracts';
import { DemoFailure } from './failure';
import { short } from './timeline';

/** A simulated player's ticket, read while notifications have nothing to say. */

/** Polls the ticket until it is ASSIGNED (told to connect); a ticket that ends instead fails the demo. */
export async function untilAssigned(
  client: PlayerClient,
  ticketId: string,
  label: string,
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ticket = await client.ticket(ticketId);
    if (ticket.state === 'ASSIGNED') {
      log(`ticket ${short(ticketId)} ASSIGNED: the game server accepted the backfill`);
      return;
    }
    if (ticket.state !== 'MATCHED' || Date.now() > deadline)
      throw new DemoFailure(
        `${label}'s backfill ticket is ${ticket.state}${ticket.endReason ? ` (${ticket.endReason})` : ''}, not ASSIGNED`,
        'allocator',
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Until something is notified, polls the ticket and shows the matcher's explanation when it changes. */
export async function explainWhileSearching(
  client: PlayerClient,
  ticketId: string,
  notified: () => boolean,
  log: (line: string) => void,
): Promise<void> {
  let last: string | undefined;
  while (!notified()) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (notified()) return;
    let ticket: TicketResponse;
    try {
      ticket = await client.ticket(ticketId);
    } catch {
      continue;
    }
    if (ticket.state !== 'SEARCHING') return;
    const message = ticket.explanation?.message;
    if (message && message !== last) log(`still searching: ${message}`);
    last = message ?? last;
  }
}
