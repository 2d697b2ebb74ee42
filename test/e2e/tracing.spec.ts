import { randomBytes } from 'node:crypto';
import type { TicketResponse } from '@matchplane/contracts';
import { PlayerClient, type FetchLike, type HeartbeatHandle } from '@matchplane/sdk';
import { startControlPlane, type ControlPlane } from '../support/journey';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { waitFor } from '../support/processes';

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CONSUMER = 5;

/** A caller's own span context, sent as `traceparent` (sampled). */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** fetch that sends `traceparent` with the ticket request only (a game client tracing its queueing). */
function tracingTicketRequests(traceparent: string): FetchLike {
  return (url, init) => {
    if (init.method !== 'POST' || !new URL(url).pathname.endsWith('/queue/tickets')) {
      return fetch(url, init);
    }
    const headers = new Headers(init.headers);
    headers.set('traceparent', traceparent);
    return fetch(url, { ...init, headers });
  };
}

/*
 * Every app exports its spans to an in-test OTLP/HTTP receiver. Two players queue for a duel,
 * each request carrying its own trace; the match continues the trace of the older ticket's
 * request (linking the other), and that trace id is followed through the API's request span, the
 * dispatcher's deliveries and subscriber, and the allocator's work for the match.
 */
describe('tracing: one trace from the API request through the dispatcher to the allocator', () => {
  let receiver: OtlpReceiver | undefined;
  let plane: ControlPlane | undefined;
  const heartbeats: HeartbeatHandle[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    plane = await startControlPlane({
      apis: 1,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        // The SDK's own variable: export within 100 ms instead of 5 s.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
  }, 90_000);

  afterAll(async () => {
    for (const handle of heartbeats) handle.stop();
    await plane?.close();
    await receiver?.close();
  }, 60_000);

  it('carries the ticket request trace id to the delivery and allocation spans of its match', async () => {
    if (!plane || !receiver) throw new Error('not started');
    const spans = receiver;
    const [older, newer] = [callerContext(), callerContext()];
    const players = [older, newer].map(
      (caller) =>
        new PlayerClient({
          baseUrl: plane!.apiUrl(0),
          fetch: tracingTicketRequests(caller.traceparent),
          retries: { retries: 3, baseDelayMs: 100 },
        }),
    );
    const tickets: TicketResponse[] = [];
    for (const player of players) {
      await player.createSession();
      await player.probeAll(['eu-west'], { samples: 1 });
      // One after the other: the first ticket is the older one.
      const ticket = await player.enqueue('duel');
      heartbeats.push(player.startHeartbeats(ticket.id));
      tickets.push(ticket);
    }
    const matched = await Promise.all(
      players.map((player, index) =>
        player.waitForTicket(tickets[index]!.id, (t) => t.state !== 'SEARCHING', {
          timeoutMs: 60_000,
          pollMs: 100,
        }),
      ),
    );
    const matchId = matched[0]!.matchId;
    expect(matchId).toBeDefined();
    expect(matched[1]!.matchId).toBe(matchId);

    const span = (what: string, predicate: (s: ReceivedSpan) => boolean) =>
      waitFor(() => Promise.resolve(spans.find(predicate)), { timeoutMs: 30_000, what });

    // The API's request span continues each caller's trace.
    const request = await span(
      'the API span of the older ticket request',
      (s) =>
        s.service === 'api' &&
        s.kind === SPAN_KIND_SERVER &&
        s.attributes['http.request.method'] === 'POST' &&
        String(s.attributes['http.route']).endsWith('/queue/tickets') &&
        s.traceId === older.traceId,
    );
    expect(request.parentSpanId).toBe(older.spanId);
    expect(request.attributes['http.response.status_code']).toBe(201);
    await span(
      'the API span of the newer ticket request',
      (s) => s.service === 'api' && s.kind === SPAN_KIND_SERVER && s.traceId === newer.traceId,
    );

    // The dispatcher delivers the event the request committed (the ticket's first state), in
    // the request's trace ...
    const ticketCreated = await span(
      "the delivery of the older ticket's first event",
      (s) =>
        s.service === 'dispatcher' &&
        s.name === 'deliver ticket.state_changed' &&
        s.attributes['matchplane.aggregate_id'] === tickets[0]!.id &&
        s.attributes['matchplane.revision'] === '1',
    );
    // ... under the request's commit (the transaction that wrote the ticket and its event).
    const commit = await span(
      'the commit of the older ticket request',
      (s) =>
        s.service === 'api' && s.name === 'transaction' && s.spanId === ticketCreated.parentSpanId,
    );
    expect(commit).toMatchObject({ traceId: older.traceId, parentSpanId: request.spanId });
    expect(ticketCreated).toMatchObject({ traceId: older.traceId, kind: SPAN_KIND_CONSUMER });

    // The matcher forms the match in the older ticket's trace, linking the newer one's.
    const formed = await span(
      'the matcher span of the match',
      (s) => s.service === 'matcher' && s.name === 'form match' && s.traceId === older.traceId,
    );
    expect(formed.links.map((link) => link.traceId)).toEqual([newer.traceId]);

    // The dispatcher's delivery of the match's ALLOCATING event, and its allocation trigger.
    const delivery = await span(
      "the delivery of the match's first state change",
      (s) =>
        s.service === 'dispatcher' &&
        s.name === 'deliver match.state_changed' &&
        s.attributes['matchplane.aggregate_id'] === matchId &&
        s.attributes['matchplane.revision'] === '1',
    );
    expect(delivery).toMatchObject({ traceId: older.traceId, parentSpanId: formed.spanId });
    const trigger = await span(
      'the allocation trigger subscriber span',
      (s) =>
        s.service === 'dispatcher' &&
        s.name === 'AllocationTriggerSubscriber match.state_changed' &&
        s.parentSpanId === delivery.spanId,
    );
    expect(trigger.traceId).toBe(older.traceId);

    // The allocator's work for that match, same trace.
    const allocation = await span(
      "the allocator's span of the match",
      (s) =>
        s.service === 'allocator' &&
        s.name === 'allocate match' &&
        s.attributes['matchplane.match_id'] === matchId,
    );
    expect(allocation).toMatchObject({
      traceId: older.traceId,
      parentSpanId: trigger.spanId,
      kind: SPAN_KIND_CONSUMER,
    });
    expect(spans.problems).toEqual([]);
  });
});
