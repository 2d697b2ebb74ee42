import {
  ErrorCode,
  PlayerRoutes,
  type CreateTicketRequest,
  type TicketResponse,
} from '@matchplane/contracts';
import { pollUntil, type PlayerCalls } from './player-calls';
import type { ProbeCalls } from './player-probes';
import { MatchplaneApiError } from './sdk.errors';

export interface HeartbeatOptions {
  /** Default: `heartbeatIntervalMs` of the queue options, else 10_000. */
  intervalMs?: number;
  /** Called with a failed heartbeat that does not end the loop (the loop keeps going). Its own throws are ignored. */
  onError?: (error: unknown) => void;
}

/** Why a heartbeat loop ended. */
export type HeartbeatStopReason =
  | { readonly reason: 'stopped' }
  /** The ticket left SEARCHING/MATCHED (e.g. ASSIGNED, CANCELLED, EXPIRED). */
  | { readonly reason: 'left-queue'; readonly ticket: TicketResponse }
  /**
   * The server no longer takes heartbeats for it: 404, or 409 TICKET_FINISHED whose problem says
   * how it ended (`ticketState`, `endReason`, e.g. EXPIRED SEARCH_TIMED_OUT: queue again).
   */
  | { readonly reason: 'finished'; readonly error: MatchplaneApiError };

export interface HeartbeatHandle {
  /** Ends the loop; a heartbeat in flight completes but none follows. Idempotent. */
  stop(): void;
  /** Settles (never rejects) when the loop ends, with why. */
  readonly done: Promise<HeartbeatStopReason>;
}

export interface WaitForTicketOptions {
  /** Default 30_000. */
  timeoutMs?: number;
  /** Default 500. */
  pollMs?: number;
}

/** `waitForTicket` ran out of time; `lastTicket` is what it saw last. */
export class TicketWaitTimeoutError extends Error {
  override name = 'TicketWaitTimeoutError';

  constructor(
    readonly ticketId: string,
    readonly lastTicket: TicketResponse,
    timeoutMs: number,
  ) {
    super(
      `ticket ${ticketId} did not reach the awaited state within ${timeoutMs} ms (last state ${lastTicket.state})`,
    );
  }
}

/** Ticket states that take heartbeats (DESIGN.md "Aggregates and states"). */
const HEARTBEAT_STATES: ReadonlySet<string> = new Set(['SEARCHING', 'MATCHED']);
const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/** PlayerClient's queue tickets and their heartbeats (documented there). */
export class TicketCalls {
  constructor(
    private readonly calls: PlayerCalls,
    private readonly probes: ProbeCalls,
  ) {}

  enqueue(
    mode: string,
    options: { attributes?: CreateTicketRequest['attributes'] } = {},
  ): Promise<TicketResponse> {
    const body: CreateTicketRequest =
      options.attributes === undefined ? { mode } : { mode, attributes: options.attributes };
    return this.calls.required<TicketResponse>({
      method: 'POST',
      path: PlayerRoutes.tickets,
      body,
      retry: 'idempotency-key',
    });
  }

  heartbeat(ticketId: string): Promise<TicketResponse> {
    return this.calls.required<TicketResponse>({
      method: 'POST',
      path: PlayerRoutes.ticketHeartbeat(ticketId),
      retry: 'idempotency-key',
    });
  }

  cancel(ticketId: string): Promise<TicketResponse> {
    return this.calls.required<TicketResponse>({
      method: 'DELETE',
      path: PlayerRoutes.ticket(ticketId),
      retry: 'idempotency-key',
    });
  }

  ticket(ticketId: string): Promise<TicketResponse> {
    return this.calls.required<TicketResponse>({
      method: 'GET',
      path: PlayerRoutes.ticket(ticketId),
      retry: 'safe',
    });
  }

  startHeartbeats(ticketId: string, options: HeartbeatOptions = {}): HeartbeatHandle {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settle: (reason: HeartbeatStopReason) => void = () => undefined;
    const done = new Promise<HeartbeatStopReason>((resolve) => (settle = resolve));

    const finish = (reason: HeartbeatStopReason): void => {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      settle(reason);
    };
    const report = (error: unknown): void => {
      if (stopped) return;
      try {
        options.onError?.(error);
      } catch {
        // A throwing callback must not end (or crash) the loop.
      }
    };
    const schedule = (intervalMs: number): void => {
      if (stopped) return;
      timer = setTimeout(() => void beat(intervalMs), intervalMs);
      unref(timer);
    };
    const beat = async (intervalMs: number): Promise<void> => {
      try {
        const ticket = await this.heartbeat(ticketId);
        if (!HEARTBEAT_STATES.has(ticket.state)) return finish({ reason: 'left-queue', ticket });
      } catch (err) {
        if (isTicketGone(err)) return finish({ reason: 'finished', error: err });
        report(err);
      }
      schedule(intervalMs);
    };

    void this.heartbeatIntervalMs(options.intervalMs, report).then(schedule);
    return { stop: () => finish({ reason: 'stopped' }), done };
  }

  async waitForTicket(
    ticketId: string,
    predicate: (ticket: TicketResponse) => boolean,
    options: WaitForTicketOptions = {},
  ): Promise<TicketResponse> {
    return pollUntil(
      () => this.ticket(ticketId),
      (ticket) => (predicate(ticket) ? ticket : undefined),
      options,
      (last, timeoutMs) => new TicketWaitTimeoutError(ticketId, last, timeoutMs),
    );
  }

  private async heartbeatIntervalMs(
    explicit: number | undefined,
    report: (error: unknown) => void,
  ): Promise<number> {
    if (explicit !== undefined) return explicit;
    if (this.probes.lastQueueOptions) return this.probes.lastQueueOptions.heartbeatIntervalMs;
    try {
      return (await this.probes.queueOptions()).heartbeatIntervalMs;
    } catch (err) {
      report(err);
      return DEFAULT_HEARTBEAT_INTERVAL_MS;
    }
  }
}

function isTicketGone(err: unknown): err is MatchplaneApiError {
  return (
    err instanceof MatchplaneApiError &&
    (err.status === 404 || (err.status === 409 && err.code === ErrorCode.TICKET_FINISHED))
  );
}

/** Node timers have unref(); browser timers are numbers and never hold a process open anyway. */
function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}
