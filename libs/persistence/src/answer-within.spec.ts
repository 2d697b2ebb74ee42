import { answerWithin } from './answer-within';

describe('answerWithin', () => {
  it('answers what the work answers in time', async () => {
    await expect(answerWithin(Promise.resolve(7), 1_000)).resolves.toBe(7);
  });

  it('passes the work’s own failure through', async () => {
    await expect(answerWithin(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow(
      'refused',
    );
  });

  it('fails once the time is up, naming it, while the work is still pending', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(answerWithin(never, 20)).rejects.toThrow('no answer within 20 ms');
  });
});
