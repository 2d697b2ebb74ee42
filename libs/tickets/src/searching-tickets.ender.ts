import { DomainError, type TicketCommand } from '@matchplane/domain';
import type { DataSource, EntityManager } from 'typeorm';
import {
  itemFailure,
  runBoundedTransaction,
  type ItemFailure,
  type ReconciliationStage,
  type StageBatch,
  type UnitOfWork,
} from '@matchplane/persistence';
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

/** What a searching-ticket stage locked for one batch. */
export interface ClaimedSearching {
  /** Every ticket the batch took (ended, left alone or failed). */
  taken: number;
  /** The tickets to end, each with `own` (undefined: left alone). */
  ids: readonly string[];
  own: (ticket: StoredTicket) => TicketCommand | undefined;
}

/**
 * A one-case stage ending searching tickets a batch per short (bounded) transaction: the owner's
 * claim locks them, {@link endClaimedSearching} ends them with their searching party mates.
 */
export abstract class SearchingTicketsStage implements ReconciliationStage {
  readonly cases: readonly string[];

  protected constructor(
    readonly name: string,
    private readonly reconciledCase: string,
    readonly order: number,
    private readonly dataSource: DataSource,
    protected readonly tickets: TicketStore,
    /** What a party mate of an ended ticket is ended with. */
    private readonly mates: TicketCommand,
  ) {
    this.cases = [reconciledCase];
  }

  /** Locks this batch's tickets at `now`, those in `skip` left alone. */
  protected abstract claim(
    manager: EntityManager,
    now: Date,
    skip: ReadonlySet<string>,
  ): Promise<ClaimedSearching>;

  batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    return runBoundedTransaction(this.dataSource, async (manager, unit) => {
      const { taken, ids, own } = await this.claim(manager, now, skip);
      const { ended, failures } = await endClaimedSearching(
        unit,
        this.tickets,
        ids,
        own,
        this.mates,
        now,
      );
      return { reconciled: { [this.reconciledCase]: ended.length }, taken, failures };
    });
  }
}
