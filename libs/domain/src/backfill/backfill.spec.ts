import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import { openBackfill, transitionBackfill } from './backfill';

const t0 = new Date('2026-12-03T18:00:00.000Z');
const later = new Date(t0.getTime() + 30_000);

const audience = [randomUUID()];

function open(slots = 2) {
  return openBackfill(
    { id: randomUUID(), matchId: randomUUID(), mode: 'squad', team: 1, slots, expiresAt: later },
    t0,
    audience,
  );
}

function fails(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('backfill request', () => {
  it('goes OPEN -> MATCHED -> PUBLISHED -> ASSIGNED -> FILLED, one event per step', () => {
    const players = [randomUUID(), randomUUID()];
    let { request, events } = open();
    expect(events[0]!.payload).toMatchObject({ from: null, to: 'OPEN', playerIds: [] });
    ({ request, events } = transitionBackfill(
      request,
      { to: 'MATCHED', playerIds: players },
      t0,
      audience,
    ));
    expect(events[0]!.playerIds).toEqual([...audience, ...players].sort());
    ({ request, events } = transitionBackfill(
      request,
      { to: 'PUBLISHED', rosterRevision: 2 },
      t0,
      audience,
    ));
    expect(events[0]!.payload.rosterRevision).toBe(2);
    ({ request } = transitionBackfill(request, { to: 'ASSIGNED' }, t0, audience));
    ({ request, events } = transitionBackfill(request, { to: 'FILLED' }, t0, audience));
    expect(request).toMatchObject({ state: 'FILLED', revision: 5, rosterRevision: 2 });
    expect(events[0]!).toMatchObject({ aggregateType: 'backfill', revision: 5 });
  });

  it('refuses a skipped step, a wrong number of players, and an end without its reason', () => {
    const { request } = open(2);
    expect(fails(() => transitionBackfill(request, { to: 'FILLED' }, t0, audience)).code).toBe(
      'ILLEGAL_TRANSITION',
    );
    expect(
      fails(() =>
        transitionBackfill(request, { to: 'MATCHED', playerIds: [randomUUID()] }, t0, audience),
      ).code,
    ).toBe('INVALID_ARGUMENT');
    expect(
      fails(() =>
        transitionBackfill(request, { to: 'EXPIRED', reason: 'SERVER_CANCELLED' }, t0, audience),
      ).code,
    ).toBe('INVALID_ARGUMENT');
    expect(
      transitionBackfill(request, { to: 'EXPIRED', reason: 'TIMED_OUT' }, t0, audience).request,
    ).toMatchObject({ state: 'EXPIRED', reason: 'TIMED_OUT' });
  });

  it('refuses a request for no places, or one already past its deadline', () => {
    expect(fails(() => open(0)).code).toBe('INVALID_ARGUMENT');
    expect(
      fails(() =>
        openBackfill(
          {
            id: randomUUID(),
            matchId: randomUUID(),
            mode: 'squad',
            team: 0,
            slots: 1,
            expiresAt: t0,
          },
          t0,
          audience,
        ),
      ).code,
    ).toBe('INVALID_ARGUMENT');
  });
});
