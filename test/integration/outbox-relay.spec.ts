import { outboxWakeChannel } from '@matchplane/outbox';
import { DispatcherMetrics } from '../../apps/dispatcher/src/dispatcher.metrics';
import { OutboxRelay } from '../../apps/dispatcher/src/outbox.relay';
import { countByStatus, sleep, useOutboxTestbed } from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * What a burst of commit signals costs the relay: counted claim statements, with the polling
 * backstop pushed out of the way (one poll a minute).
 */
describe(`${OutboxRelay.name} wake-ups`, () => {
  const t = useOutboxTestbed();

  afterEach(() => t.closeDispatchers());

  async function start(minIntervalMs: number) {
    const dispatcher = await t.startDispatcher({
      OUTBOX_POLL_INTERVAL_MS: '60000',
      OUTBOX_RELAY_MIN_INTERVAL_MS: String(minIntervalMs),
    });
    const metrics = dispatcher.app.get(DispatcherMetrics);
    const count = async (counter: typeof metrics.claimPasses) =>
      (await counter.get()).values.reduce((sum, value) => sum + value.value, 0);
    // Past the start-up pass.
    await sleep(100);
    return {
      dispatcher,
      claimStatements: () => count(metrics.claimPasses),
      wakeUps: () => count(metrics.wakeUps),
    };
  }

  /** `signals` commit signals, `gapMs` apart (0: all in one pipeline), then time to settle. */
  async function signal(signals: number, gapMs: number): Promise<void> {
    const channel = outboxWakeChannel(t.prefix);
    if (gapMs === 0) {
      const pipeline = t.redis.pipeline();
      for (let i = 0; i < signals; i += 1) pipeline.publish(channel, '1');
      await pipeline.exec();
    } else {
      for (let i = 0; i < signals; i += 1) {
        await t.redis.publish(channel, '1');
        await sleep(gapMs);
      }
    }
    await sleep(300);
  }

  it('answers a burst of 500 commit signals with one or two claim statements (default spacing)', async () => {
    const counts = await start(5);
    const before = { statements: await counts.claimStatements(), wakeUps: await counts.wakeUps() };
    await signal(500, 0);
    const wakeUps = (await counts.wakeUps()) - before.wakeUps;
    const statements = (await counts.claimStatements()) - before.statements;
    expect(wakeUps).toBe(500);
    expect(statements).toBeGreaterThanOrEqual(1);
    expect(statements).toBeLessThanOrEqual(2);
    console.log(`relay: a burst of ${wakeUps} signals cost ${statements} claim statement(s)`);
  });

  it('spaces claim statements by OUTBOX_RELAY_MIN_INTERVAL_MS however often it is woken', async () => {
    const counts = await start(50);
    const before = await counts.claimStatements();
    const startedAt = performance.now();
    await signal(200, 1);
    const elapsedMs = performance.now() - startedAt;
    const statements = (await counts.claimStatements()) - before;
    expect(statements).toBeLessThanOrEqual(Math.ceil(elapsedMs / 50) + 1);
    console.log(
      `relay: 200 signals over ${Math.round(elapsedMs)} ms cost ${statements} claim statement(s)`,
    );
  });

  it('still delivers every row of a burst of commits', async () => {
    const { dispatcher } = await start(5);
    const { aggregates, ds } = t;
    const ids = await aggregates.add(50);
    await Promise.all(ids.map((id) => aggregates.advance(id)));
    await waitFor(async () => ((await countByStatus(ds)).pending === 0 ? true : undefined), {
      what: 'the burst delivered',
    });
    expect(dispatcher.recorder.calls).toHaveLength(50);
  });
});
