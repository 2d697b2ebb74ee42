import { RequestBatcher, type BatchOutcome } from './request.batcher';

/** A run that records its batches and holds their answers until the test lets them all go. */
function recorder<I>() {
  const batches: I[][] = [];
  const held: (() => void)[] = [];
  let holding = true;
  const run = (inputs: readonly I[]) => {
    batches.push([...inputs]);
    const answers = inputs.map((input) => ({ value: `done ${String(input)}` }));
    if (!holding) return Promise.resolve(answers);
    return new Promise<BatchOutcome<string>[]>((resolve) => held.push(() => resolve(answers)));
  };
  /** Answers every batch held and every later one. */
  const releaseAll = () => {
    holding = false;
    for (const release of held.splice(0)) release();
  };
  return { batches, run, releaseAll };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe(RequestBatcher.name, () => {
  it('calls made in the same turn of the event loop go in one batch, each answered', async () => {
    const r = recorder<number>();
    const batcher = new RequestBatcher(r.run, { maxBatchSize: 10, maxConcurrentBatches: 1 });
    const answers = Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    await turn();
    expect(r.batches).toEqual([[1, 2, 3]]);
    r.releaseAll();
    expect(await answers).toEqual(['done 1', 'done 2', 'done 3']);
  });

  it('calls arriving while every slot is busy wait and leave together when one frees', async () => {
    const r = recorder<number>();
    const batcher = new RequestBatcher(r.run, { maxBatchSize: 10, maxConcurrentBatches: 2 });
    const all = [batcher.submit(1)];
    await turn();
    all.push(batcher.submit(2));
    await turn();
    all.push(batcher.submit(3), batcher.submit(4));
    await turn();
    all.push(batcher.submit(5));
    await turn();
    // Two slots: [1] and [2] run; 3, 4 and 5 wait.
    expect(r.batches).toEqual([[1], [2]]);
    expect(batcher.pending).toBe(3);
    r.releaseAll();
    expect(await Promise.all(all)).toHaveLength(5);
    expect(r.batches).toEqual([[1], [2], [3, 4, 5]]);
  });

  it('never puts more than maxBatchSize calls in a batch', async () => {
    const r = recorder<number>();
    const batcher = new RequestBatcher(r.run, { maxBatchSize: 2, maxConcurrentBatches: 1 });
    const all = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    await turn();
    r.releaseAll();
    await Promise.all(all);
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("an input's error is its own; an error of the whole run is everyone's", async () => {
    let fail = false;
    const batcher = new RequestBatcher<number, number>(
      (inputs) => {
        if (fail) return Promise.reject(new Error('database down'));
        return Promise.resolve(
          inputs.map((n) =>
            n % 2 === 0 ? { error: new Error(`odd one out ${n}`) } : { value: n },
          ),
        );
      },
      { maxBatchSize: 10, maxConcurrentBatches: 1 },
    );
    const mixed = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit(n)));
    expect(mixed.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((mixed[1] as PromiseRejectedResult).reason).toEqual(new Error('odd one out 2'));
    fail = true;
    const failed = await Promise.allSettled([5, 7].map((n) => batcher.submit(n)));
    expect(failed.map((result) => (result as PromiseRejectedResult).reason as unknown)).toEqual([
      new Error('database down'),
      new Error('database down'),
    ]);
  });

  it('a run answering the wrong number of outcomes fails its batch instead of misrouting answers', async () => {
    const batcher = new RequestBatcher<number, number>(() => Promise.resolve([{ value: 1 }]), {
      maxBatchSize: 10,
      maxConcurrentBatches: 1,
    });
    const results = await Promise.allSettled([1, 2].map((n) => batcher.submit(n)));
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });

  it('inputs sharing an exclusive key are never in flight together', async () => {
    const r = recorder<string>();
    const batcher = new RequestBatcher(r.run, {
      maxBatchSize: 10,
      maxConcurrentBatches: 3,
      exclusiveKey: (input) => input.split(':')[0] as string,
    });
    const all = ['a:1', 'b:1', 'a:2', 'c:1', 'a:3'].map((input) => batcher.submit(input));
    await turn();
    // a:2 and a:3 wait for a:1's batch even though slots are free.
    expect(r.batches).toEqual([['a:1', 'b:1', 'c:1']]);
    r.releaseAll();
    await Promise.all(all);
    expect(r.batches).toEqual([['a:1', 'b:1', 'c:1'], ['a:2'], ['a:3']]);
  });
});
