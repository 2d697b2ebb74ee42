/** What a batch answers for one of its inputs: a value, or that input's own error. */
export type BatchOutcome<O> = { readonly value: O } | { readonly error: unknown };

export interface RequestBatcherOptions<I> {
  /** Most inputs in one batch. */
  readonly maxBatchSize: number;
  /** Most batches running at once; arrivals meanwhile wait and go together in the next one. */
  readonly maxConcurrentBatches: number;
  /**
   * Inputs with equal keys are never in flight together: a later one waits until the batch holding
   * the earlier one has finished (e.g. two requests with one idempotency key, where the second must
   * see the first's outcome).
   */
  readonly exclusiveKey?: (input: I) => string;
  /** Told each batch's size as it starts (a metric). */
  readonly onBatch?: (size: number) => void;
}

interface Waiting<I, O> {
  readonly input: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Groups calls that arrive close together into one batch call ("natural" batching: no timer).
 * A call that finds a free batch slot is flushed on the next turn of the event loop, with whatever
 * else arrived in the same turn; calls arriving while every slot is busy queue up and leave
 * together when a slot frees. So an idle service adds no latency, and a loaded one pays one
 * batch (a few round trips) for many calls instead of a few round trips each.
 *
 * `run` answers one outcome per input, in order; an error thrown by `run` itself is every
 * input's error.
 */
export class RequestBatcher<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private running = 0;
  private flushScheduled = false;
  private readonly keysInFlight = new Set<string>();

  constructor(
    private readonly run: (inputs: readonly I[]) => Promise<readonly BatchOutcome<O>[]>,
    private readonly options: RequestBatcherOptions<I>,
  ) {
    if (options.maxBatchSize < 1 || options.maxConcurrentBatches < 1) {
      throw new Error('RequestBatcher: maxBatchSize and maxConcurrentBatches must be at least 1');
    }
  }

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Calls waiting for a batch (not those already in one). */
  get pending(): number {
    return this.queue.length;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.running >= this.options.maxConcurrentBatches) return;
    this.flushScheduled = true;
    // setImmediate runs after the I/O callbacks of this turn: requests read together batch together.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.running < this.options.maxConcurrentBatches) {
      const { batch, keys } = this.take();
      if (batch.length === 0) return; // everything waiting shares a key with a running batch
      this.running += 1;
      this.options.onBatch?.(batch.length);
      void this.execute(batch).finally(() => {
        this.running -= 1;
        for (const key of keys) this.keysInFlight.delete(key);
        if (this.queue.length > 0) this.scheduleFlush();
      });
    }
  }

  private take(): { batch: Waiting<I, O>[]; keys: string[] } {
    const { maxBatchSize, exclusiveKey } = this.options;
    if (!exclusiveKey) return { batch: this.queue.splice(0, maxBatchSize), keys: [] };
    const batch: Waiting<I, O>[] = [];
    const keys: string[] = [];
    const deferred: Waiting<I, O>[] = [];
    while (this.queue.length > 0 && batch.length < maxBatchSize) {
      const waiting = this.queue.shift() as Waiting<I, O>;
      const key = exclusiveKey(waiting.input);
      if (this.keysInFlight.has(key)) deferred.push(waiting);
      else {
        this.keysInFlight.add(key);
        keys.push(key);
        batch.push(waiting);
      }
    }
    this.queue.unshift(...deferred);
    return { batch, keys };
  }

  private async execute(batch: readonly Waiting<I, O>[]): Promise<void> {
    let outcomes: readonly BatchOutcome<O>[];
    try {
      outcomes = await this.run(batch.map((waiting) => waiting.input));
      if (outcomes.length !== batch.length) {
        throw new Error(`batch answered ${outcomes.length} outcomes for ${batch.length} inputs`);
      }
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, index) => {
      const outcome = outcomes[index] as BatchOutcome<O>;
      if ('error' in outcome) waiting.reject(outcome.error);
      else waiting.resolve(outcome.value);
    });
  }
}
