import { Client } from 'pg';
import { countByStatus, sleep, useOutboxTestbed } from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * What the dispatcher costs PostgreSQL per delivered event, counted at the driver: every query
 * the dispatcher's connections (application_name "dispatcher") send, and the transactions they
 * make (an explicit BEGIN..COMMIT, or one autocommit statement). Heartbeats are periodic, not per
 * event, and are reported apart.
 */

interface Tally {
  statements: number;
  transactions: number;
  heartbeats: number;
}

class StatementCounter {
  private tally: Tally = { statements: 0, transactions: 0, heartbeats: 0 };
  private readonly inTransaction = new WeakSet<Client>();
  private original?: Client['query'];

  install(applicationName: string): void {
    const original = Client.prototype.query;
    this.original = original;
    const count = (client: Client, text: string) => this.count(client, text);
    Client.prototype.query = function (this: Client, ...args: unknown[]) {
      const params = (this as unknown as { connectionParameters?: { application_name?: string } })
        .connectionParameters;
      const config = args[0];
      const text =
        typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text;
      if (params?.application_name === applicationName && typeof text === 'string')
        count(this, text);
      return (original as (...rest: unknown[]) => unknown).apply(this, args);
    } as Client['query'];
  }

  uninstall(): void {
    if (this.original) Client.prototype.query = this.original;
  }

  reset(): void {
    this.tally = { statements: 0, transactions: 0, heartbeats: 0 };
  }

  read(): Tally {
    return { ...this.tally };
  }

  private count(client: Client, text: string): void {
    const sql = text.trim().toUpperCase();
    if (/^(INSERT INTO|DELETE FROM) outbox_dispatchers\b/i.test(text.trim())) {
      this.tally.heartbeats += 1;
      return;
    }
    this.tally.statements += 1;
    if (sql.startsWith('START TRANSACTION') || sql.startsWith('BEGIN')) {
      this.inTransaction.add(client);
      this.tally.transactions += 1;
    } else if (sql.startsWith('COMMIT') || sql.startsWith('ROLLBACK')) {
      this.inTransaction.delete(client);
    } else if (!this.inTransaction.has(client)) {
      this.tally.transactions += 1;
    }
  }
}

const AGGREGATES = 50;

describe('what delivering costs PostgreSQL, per event', () => {
  const t = useOutboxTestbed();
  const counter = new StatementCounter();

  beforeAll(() => counter.install('dispatcher'));
  afterEach(() => t.closeDispatchers());
  afterAll(() => counter.uninstall());

  const drained = () =>
    waitFor(async () => ((await countByStatus(t.ds)).pending === 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'every event delivered',
    });

  const start = () => t.startDispatcher({ OUTBOX_POLL_INTERVAL_MS: '250' });

  const perEvent = (tally: Tally, events: number) =>
    `${(tally.statements / events).toFixed(3)} statements and ${(tally.transactions / events).toFixed(3)} transactions per event ` +
    `(${tally.statements} statements, ${tally.transactions} transactions, ${tally.heartbeats} heartbeats for ${events} events)`;

  it('a backlog (50 aggregates x 20 events, committed before the dispatcher starts) costs a fraction of a statement per event', async () => {
    const ids = await t.aggregates.add(AGGREGATES);
    await t.aggregates.advanceEach(ids, 20);
    const events = AGGREGATES * 20;
    counter.reset();
    const dispatcher = await start();
    await drained();
    const tally = counter.read();
    console.log(`backlog: ${perEvent(tally, events)}`);
    expect(dispatcher.recorder.calls).toHaveLength(events);
    expect(tally.statements / events).toBeLessThan(0.5);
  });

  it('a trickle (one event at a time, 10 ms apart) costs at most two statements per event: its claim and its ack', async () => {
    const ids = await t.aggregates.add(AGGREGATES);
    await start();
    await sleep(300);
    counter.reset();
    const events = 200;
    for (let i = 0; i < events; i += 1) {
      await t.aggregates.advance(ids[i % AGGREGATES]!);
      await sleep(10);
    }
    await drained();
    const tally = counter.read();
    console.log(`trickle: ${perEvent(tally, events)}`);
    expect(tally.statements / events).toBeLessThanOrEqual(2.2);
  });
});
