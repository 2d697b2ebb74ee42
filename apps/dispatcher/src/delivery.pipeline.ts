import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DispatcherConfig } from './dispatcher.config';
import {
  OutboxDelivery,
  OutboxRepository,
  type ClaimedRow,
  type DeliveryResult,
  type Settlement,
} from '@matchplane/outbox';
import { backoffDelayMs, sleep, sqlStateOf } from '@matchplane/persistence';
import { DispatcherLease } from './dispatcher.lease';
import { DispatcherMetrics } from './dispatcher.metrics';

interface Delivered {
  row: ClaimedRow;
  result: DeliveryResult;
}

/** Bounds one settle statement's arrays; a bigger backlog of results takes several. */
const MAX_SETTLE_ROWS = 1_000;
/** Retries of an ack the database refused: its aggregate waits meanwhile (the claim is kept). */
const ACK_RETRY = { baseMs: 200, capMs: 5_000 };

/**
 * An error PostgreSQL raised for this statement (a SQLSTATE outside connection loss, shutdown
 * and resource exhaustion): some row of the batch is refused, so settling the rows one by one
 * gets the others through. Anything else (the database unreachable) fails every row alike.
 */
function refusedByDatabase(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57)/.test(code);
}

/**
 * Delivers the rows this process claimed: each aggregate's row goes to its subscribers as soon
 * as it is claimed (aggregates in parallel, at most DISPATCHER_CONCURRENCY, one row each), and
 * the results are settled together: one settle statement at a time, at most one per
 * OUTBOX_SETTLE_MIN_INTERVAL_MS, each taking every result that arrived meanwhile, so under load
 * one statement acks many rows and claims each acked aggregate's next row, which is then
 * delivered directly, without a relay pass.
 */
@Injectable()
export class DeliveryPipeline {
  private readonly logger = new Logger(DeliveryPipeline.name);
  private readonly concurrency: number;
  private readonly settleIntervalMs: number;
  private lastSettleAt = Number.NEGATIVE_INFINITY;
  /** Claimed rows held and not settled yet: one per aggregate, in any state below. */
  private held = 0;
  private delivering = 0;
  private readonly results: Delivered[] = [];
  private settling?: Promise<void>;
  /** Rows whose hand-off waits until the heartbeat proves the claims ours again. */
  private parked: ClaimedRow[] = [];
  private renewing?: Promise<void>;
  private readonly ackFailures = new Map<string, number>();
  private readonly ackRetries = new Set<NodeJS.Timeout>();
  private draining = false;
  private slotListener?: () => void;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly delivery: OutboxDelivery,
    private readonly lease: DispatcherLease,
    private readonly metrics: DispatcherMetrics,
    @Inject(DispatcherConfig) config: DispatcherConfig,
  ) {
    this.concurrency = config.DISPATCHER_CONCURRENCY;
    this.settleIntervalMs = config.OUTBOX_SETTLE_MIN_INTERVAL_MS;
    lease.onBeat(() => this.renewParked());
    metrics.observeRows(() => ({
      held: this.held,
      delivering: this.delivering,
      settling: this.results.length,
      parked: this.parked.length,
      retrying: this.ackRetries.size,
    }));
  }

  /** How many more aggregates this process may take on. */
  freeSlots(): number {
    return this.draining ? 0 : Math.max(0, this.concurrency - this.held);
  }

  /** `listener` runs whenever a settlement frees slots (the relay claims more if it had to stop). */
  onFreeSlots(listener: () => void): void {
    this.slotListener = listener;
  }

  /** Takes on rows claimed by a statement sent at `claimSentAt` (performance.now()). */
  accept(rows: readonly ClaimedRow[], claimSentAt: number): void {
    this.held += rows.length;
    for (const row of rows) this.start(row, claimSentAt);
  }

  /**
   * For a clean shutdown: claims nothing more, lets the deliveries under way finish and settles
   * them. Rows parked or waiting to retry their ack keep their claims, which the others take over
   * once this dispatcher retires.
   */
  async drain(): Promise<void> {
    this.draining = true;
    for (const timer of this.ackRetries) clearTimeout(timer);
    this.ackRetries.clear();
    while (this.delivering > 0 || this.results.length > 0 || this.settling || this.renewing) {
      await (this.settling ?? this.renewing ?? sleep(5));
    }
  }

  private start(row: ClaimedRow, claimSentAt: number): void {
    if (this.draining) return;
    // The fence before the subscribers: the ack is fenced in PostgreSQL, but a hand-off cannot be
    // taken back, so it happens only while no one else can have taken the claim over.
    if (!this.lease.mayHandOff(claimSentAt)) {
      this.parked.push(row);
      return;
    }
    this.delivering += 1;
    void this.delivery.deliver(row).then((result) => {
      this.delivering -= 1;
      this.results.push({ row, result });
      this.settleSoon();
    });
  }

  /**
   * At the next turn of the event loop, or once OUTBOX_SETTLE_MIN_INTERVAL_MS has passed since the
   * last settle started: the results arriving meanwhile share the statement. (A subscriber has
   * the event already; the wait only delays the ack and the aggregate's next event.)
   */
  private settleSoon(): void {
    if (this.settling) return;
    const wait = this.lastSettleAt + this.settleIntervalMs - performance.now();
    this.settling = new Promise<void>((resolve) =>
      wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve),
    )
      .then(() => this.settle(this.results.splice(0, MAX_SETTLE_ROWS)))
      .finally(() => {
        this.settling = undefined;
        if (this.results.length > 0) this.settleSoon();
      });
  }

  private async settle(batch: Delivered[]): Promise<void> {
    if (batch.length === 0) return;
    const next = this.draining ? undefined : { token: randomUUID(), owner: this.lease.id };
    const sentAt = performance.now();
    this.lastSettleAt = sentAt;
    let settlement: Settlement;
    this.metrics.settleStatements.inc();
    this.metrics.settleBatchSize.observe(batch.length);
    try {
      settlement = await this.outbox.settle(
        batch.map((delivered) => delivered.result),
        next,
        { maxAttempts: this.delivery.options.maxAttempts },
      );
    } catch (error) {
      if (batch.length > 1 && refusedByDatabase(error)) {
        // One row the database refuses must not hold up the rest of its batch.
        for (const delivered of batch) await this.settle([delivered]);
      } else {
        for (const delivered of batch) this.retryAck(delivered, error);
      }
      return;
    }
    const rows = new Map(batch.map(({ row }) => [row.id, row]));
    const errors = new Map(
      batch.flatMap(({ result }) => (result.delivered ? [] : [[result.id, result.error] as const])),
    );
    this.delivery.observe(settlement, rows, errors);
    for (const { row } of batch) this.ackFailures.delete(row.id);
    this.held -= batch.length;
    this.accept(settlement.successors, sentAt);
    if (this.freeSlots() > 0) this.slotListener?.();
  }

  /** The database refused the ack: the aggregate stops here and the same ack is retried later. */
  private retryAck(delivered: Delivered, error: unknown): void {
    if (this.draining) return;
    const { row } = delivered;
    const attempt = (this.ackFailures.get(row.id) ?? 0) + 1;
    this.ackFailures.set(row.id, attempt);
    const delay = backoffDelayMs(attempt, ACK_RETRY);
    this.logger.warn(
      `ack of outbox ${row.id} (${row.event} ${row.aggregate_id} r${row.revision}) failed, its aggregate waits; ` +
        `retry ${attempt} in ${delay} ms: ${error instanceof Error ? error.message : String(error)}`,
    );
    const timer = setTimeout(() => {
      this.ackRetries.delete(timer);
      this.results.push(delivered);
      this.settleSoon();
    }, delay);
    this.ackRetries.add(timer);
  }

  /** After a heartbeat: parked claims still ours are re-stamped and delivered, the others dropped. */
  private renewParked(): void {
    if (this.parked.length === 0 || this.renewing || this.draining) return;
    const rows = this.parked;
    this.parked = [];
    const sentAt = performance.now();
    this.renewing = this.outbox
      .renewClaims(rows.map((row) => ({ id: row.id, token: row.claim_token })))
      .then(
        (renewed) => {
          const ours = new Set(renewed);
          const lost = rows.filter((row) => !ours.has(row.id));
          if (lost.length > 0) {
            this.logger.warn(
              `${lost.length} claim(s) were taken over while this dispatcher could not prove its heartbeat; not delivered here: outbox ${lost.map((row) => row.id).join(', ')}`,
            );
            this.held -= lost.length;
          }
          for (const row of rows) if (ours.has(row.id)) this.start(row, sentAt);
          if (lost.length > 0 && this.freeSlots() > 0) this.slotListener?.();
        },
        (error: Error) => {
          this.parked.push(...rows);
          this.logger.warn(`could not renew ${rows.length} parked claim(s): ${error.message}`);
        },
      )
      .finally(() => (this.renewing = undefined));
  }
}
