import type Redis from 'ioredis';
import { sleep } from './bench.processes';

/** The part of a delivered notification the bench reads (Nest Redis transport: `{pattern, data}`). */
interface NotificationMessage {
  data?: { aggregateId?: unknown; revision?: unknown };
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface PhaseResult {
  committed: number;
  /** Commits whose notification arrived (first arrival per aggregate and revision). */
  delivered: number;
  /** Seconds from the first writer start to the last commit. */
  writeSeconds: number;
  /** Seconds from the first commit to the last first-arrival. */
  deliverySeconds: number;
  committedPerS: number;
  deliveredPerS: number;
  /** Seconds after the last commit until the last delivery (0 if it kept up). */
  drainSeconds: number;
  drained: boolean;
  latencyMs: Percentiles;
  duplicates: number;
  /** First arrivals of an aggregate's revision at or below one already seen: must stay 0. */
  orderViolations: number;
  /** Arrivals for no commit of this phase (e.g. left over from an earlier one): should stay 0. */
  strays: number;
  failedTransactions: number;
}

/**
 * Records, for one phase, when each (aggregate, revision) committed and when its notification
 * first arrived. Both clocks are this process's `performance.now()`.
 */
export class PhaseRecording {
  readonly commits = new Map<string, number>();
  readonly arrivals = new Map<string, number>();
  readonly lastRevision = new Map<string, number>();
  duplicates = 0;
  orderViolations = 0;
  failedTransactions = 0;
  startedAt = performance.now();
  firstCommitAt = Number.POSITIVE_INFINITY;
  lastCommitAt = 0;
  lastArrivalAt = 0;

  committed(aggregateId: string, revision: number): void {
    const now = performance.now();
    this.commits.set(`${aggregateId}/${revision}`, now);
    if (now < this.firstCommitAt) this.firstCommitAt = now;
    this.lastCommitAt = now;
  }

  arrived(aggregateId: string, revision: number, at: number): void {
    const key = `${aggregateId}/${revision}`;
    if (this.arrivals.has(key)) {
      this.duplicates += 1;
      return;
    }
    this.arrivals.set(key, at);
    this.lastArrivalAt = at;
    const last = this.lastRevision.get(aggregateId);
    if (last !== undefined && revision <= last) this.orderViolations += 1;
    else this.lastRevision.set(aggregateId, revision);
  }

  deliveredCount(): number {
    let delivered = 0;
    for (const key of this.commits.keys()) if (this.arrivals.has(key)) delivered += 1;
    return delivered;
  }

  result(drained: boolean): PhaseResult {
    const latencies: number[] = [];
    let lastDelivery = 0;
    for (const [key, committedAt] of this.commits) {
      const arrivedAt = this.arrivals.get(key);
      if (arrivedAt === undefined) continue;
      // A notification can be read before the commit's own reply in the same event-loop turn.
      latencies.push(Math.max(0, arrivedAt - committedAt));
      lastDelivery = Math.max(lastDelivery, arrivedAt);
    }
    const committed = this.commits.size;
    const delivered = latencies.length;
    const writeSeconds = committed > 0 ? (this.lastCommitAt - this.startedAt) / 1000 : 0;
    const deliverySeconds = delivered > 0 ? (lastDelivery - this.firstCommitAt) / 1000 : 0;
    return {
      committed,
      delivered,
      writeSeconds: round3(writeSeconds),
      deliverySeconds: round3(deliverySeconds),
      committedPerS: writeSeconds > 0 ? Math.round(committed / writeSeconds) : 0,
      deliveredPerS: deliverySeconds > 0 ? Math.round(delivered / deliverySeconds) : 0,
      drainSeconds: round3(Math.max(0, lastDelivery - this.lastCommitAt) / 1000),
      drained,
      latencyMs: percentiles(latencies),
      duplicates: this.duplicates,
      orderViolations: this.orderViolations,
      strays: this.arrivals.size - delivered,
      failedTransactions: this.failedTransactions,
    };
  }
}

/** One subscription for the whole run; each message goes to the phase being recorded. */
export class DeliveryRecorder {
  private phase?: PhaseRecording;
  malformed = 0;

  private constructor(private readonly subscriber: Redis) {}

  static async subscribe(subscriber: Redis, channel: string): Promise<DeliveryRecorder> {
    const recorder = new DeliveryRecorder(subscriber);
    subscriber.on('message', (_channel: string, message: string) => recorder.onMessage(message));
    await subscriber.subscribe(channel);
    return recorder;
  }

  begin(): PhaseRecording {
    this.phase = new PhaseRecording();
    return this.phase;
  }

  /**
   * Waits until every commit of the phase has arrived, giving up after `timeoutMs` or after
   * `stallMs` without a new arrival; returns whether it all arrived.
   */
  async drain(
    phase: PhaseRecording,
    { timeoutMs, stallMs }: { timeoutMs: number; stallMs: number },
  ): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    let seen = -1;
    let progressAt = performance.now();
    while (performance.now() < deadline) {
      const arrived = phase.arrivals.size;
      if (phase.deliveredCount() === phase.commits.size) return true;
      if (arrived !== seen) {
        seen = arrived;
        progressAt = performance.now();
      } else if (performance.now() - progressAt > stallMs) {
        return false;
      }
      await sleep(50);
    }
    return false;
  }

  async close(): Promise<void> {
    this.phase = undefined;
    await this.subscriber.quit().catch(() => undefined);
  }

  private onMessage(message: string): void {
    const at = performance.now();
    if (!this.phase) return;
    let parsed: NotificationMessage;
    try {
      parsed = JSON.parse(message) as NotificationMessage;
    } catch {
      this.malformed += 1;
      return;
    }
    const aggregateId = parsed.data?.aggregateId;
    const revision = Number(parsed.data?.revision);
    if (typeof aggregateId !== 'string' || !Number.isSafeInteger(revision)) {
      this.malformed += 1;
      return;
    }
    this.phase.arrived(aggregateId, revision, at);
  }
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return { p50: round1(at(0.5)), p95: round1(at(0.95)), p99: round1(at(0.99)), max: round1(at(1)) };
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
