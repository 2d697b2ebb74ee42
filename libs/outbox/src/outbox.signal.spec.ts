import type Redis from 'ioredis';
import type { ServiceConfig } from '@matchplane/config';
import { OutboxSignal, outboxWakeChannel } from './outbox.signal';

/** A Redis whose publishes answer when the test says so. */
function fakeRedis() {
  const published: string[] = [];
  const answers: (() => void)[] = [];
  const redis = {
    publish(channel: string) {
      published.push(channel);
      return new Promise<number>((resolve, reject) =>
        answers.push(() => (published.length % 2 === 0 ? reject(new Error('down')) : resolve(1))),
      );
    },
  };
  const answerAll = async () => {
    while (answers.length > 0) {
      answers.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { redis: redis as unknown as Redis, published, answerAll };
}

const config = { REDIS_KEY_PREFIX: 'mp_t' } as ServiceConfig;

describe(OutboxSignal.name, () => {
  it('publishes on the wake channel after a commit', async () => {
    const fake = fakeRedis();
    new OutboxSignal(fake.redis, config).committed();
    await fake.answerAll();
    expect(fake.published).toEqual([outboxWakeChannel('mp_t')]);
  });

  it('commits during a publish in flight cost one more publish, sent after it returns', async () => {
    const fake = fakeRedis();
    const signal = new OutboxSignal(fake.redis, config);
    signal.committed();
    for (let i = 0; i < 10; i += 1) signal.committed();
    expect(fake.published).toHaveLength(1);
    await fake.answerAll();
    expect(fake.published).toHaveLength(2);
    // Idle again (the second publish failed, which changes nothing): the next commit publishes.
    signal.committed();
    await fake.answerAll();
    expect(fake.published).toHaveLength(3);
  });
});
