import { ChaosProgram, expectNothingLost } from '../support/chaos-program';

/*
 * The chaos run's HA topology in a short form (`npm run chaos -- --topology=ha` with a few
 * faults): a Sentinel group and a PostgreSQL primary with its standby, reached by the apps only
 * through REDIS_SENTINELS and a multi-host DATABASE_URL; two matchers on duel's shards. While SDK
 * players play, a matcher is SIGKILLed (the other takes its shard), the Redis master is SIGKILLed
 * (Sentinel promotes the replica) and the PostgreSQL primary crashed for good with the standby
 * promoted. The figures are read from the promoted standby at the end: had an app not followed
 * the new primary or the new master, events would be lost and matches or tickets stranded.
 */

const FAULTS = ['matcher#0', 'redis-master', 'postgres-primary'];

describe('chaos run, HA topology (short form)', () => {
  const program = new ChaosProgram();

  afterAll(() => program.interrupt());

  it('loses, strands, duplicates and reorders nothing across a Redis master and a PostgreSQL primary failover', async () => {
    const outcome = await program.runShort(FAULTS, ['--topology=ha']);
    expectNothingLost(outcome, FAULTS);
    const { result, last } = outcome;
    expect(result.topology).toBe('ha');
    // A request caught between the primary's crash and the promotion answers 503 (which the SDK
    // retries), never 500.
    expect({ context: last, internalErrors: result.http_status_counts['500'] ?? 0 }).toMatchObject({
      internalErrors: 0,
    });
  }, 300_000);
});
