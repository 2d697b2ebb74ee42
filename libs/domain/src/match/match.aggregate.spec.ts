import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import {
  createMatch,
  transitionMatch,
  type MatchCommand,
  type MatchSnapshot,
} from './match.aggregate';
import type { MatchParticipant } from './match.events';
import { canTransitionMatch, MATCH_STATES, type MatchState } from './match-state.machine';

const t0 = new Date('2026-12-01T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

function newParticipants(count = 4): MatchParticipant[] {
  return Array.from({ length: count }, (_, index) => ({
    playerId: randomUUID(),
    ticketId: randomUUID(),
    team: index % 2,
  }));
}

function newMatch(
  overrides: Partial<{
    participants: MatchParticipant[];
    mode: string;
    region: string;
    id: string;
    awaitingAcceptance: boolean;
  }> = {},
) {
  return createMatch(
    {
      id: randomUUID(),
      mode: 'duel',
      region: 'eu-west',
      participants: newParticipants(),
      ...overrides,
    },
    t0,
  );
}

function commandTo(to: MatchState): MatchCommand {
  switch (to) {
    case 'FAILED':
      return { to, reason: 'SERVER_LOST' };
    case 'CANCELLED':
      return { to, reason: 'OPERATOR_CANCELLED' };
    case 'ALLOCATING':
    case 'PROCESS_READY':
    case 'ASSIGNMENT_READY':
    case 'IN_PROGRESS':
    case 'COMPLETED':
      return { to };
    case 'AWAITING_ACCEPTANCE':
      // Nothing enters AWAITING_ACCEPTANCE but a creation; the cast lets the test ask anyway.
      return { to } as unknown as MatchCommand;
  }
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe(createMatch.name, () => {
  it('creates an ALLOCATING match at revision 1, announced by null -> ALLOCATING to every participant', () => {
    const participants = newParticipants(3);
    const { match, events } = newMatch({ participants });
    expect(match).toMatchObject({
      state: 'ALLOCATING',
      revision: 1,
      mode: 'duel',
      region: 'eu-west',
      stateChangedAt: t0,
    });
    expect(match.failureReason).toBeUndefined();
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      event: 'match.state_changed',
      aggregateType: 'match',
      aggregateId: match.id,
      revision: 1,
      occurredAt: t0,
      payload: { matchId: match.id, from: null, to: 'ALLOCATING', mode: 'duel', region: 'eu-west' },
    });
    expect([...event!.playerIds].sort()).toEqual(participants.map((p) => p.playerId).sort());
    expect(event!.payload.participants).toEqual(match.participants);
  });

  it('creates a match of a ready-check mode AWAITING_ACCEPTANCE, which all-accepted moves to ALLOCATING', () => {
    const { match, events } = newMatch({ awaitingAcceptance: true });
    expect(match.state).toBe('AWAITING_ACCEPTANCE');
    expect(events[0]!.payload).toMatchObject({ from: null, to: 'AWAITING_ACCEPTANCE' });
    const { match: next, events: moved } = transitionMatch(match, { to: 'ALLOCATING' }, later(1));
    expect(next).toMatchObject({ state: 'ALLOCATING', revision: 2 });
    expect(moved[0]!.payload).toMatchObject({ from: 'AWAITING_ACCEPTANCE', to: 'ALLOCATING' });
  });

  it('keeps the roster in canonical order (team, then player id), as the store reads it back', () => {
    const { match } = newMatch({ participants: newParticipants(6) });
    const keys = match.participants.map((p) => `${p.team}:${p.playerId}`);
    expect(keys).toEqual([...keys].sort());
  });

  it('returns frozen values that share nothing mutable with its input', () => {
    const participants: { playerId: string; ticketId: string; team: number }[] = newParticipants(2);
    const { match, events } = newMatch({ participants });
    participants[0]!.team = 7;
    expect(match.participants.some((p) => p.team === 7)).toBe(false);
    expect(Object.isFrozen(match)).toBe(true);
    expect(Object.isFrozen(match.participants)).toBe(true);
    expect(Object.isFrozen(events[0]!.payload)).toBe(true);
  });

  it.each([
    ['no participants', { participants: [] }],
    [
      'a player twice',
      {
        participants: newParticipants(1).flatMap((p) => [
          p,
          { ...p, ticketId: randomUUID(), team: 1 },
        ]),
      },
    ],
    [
      'a ticket twice',
      { participants: newParticipants(1).flatMap((p) => [p, { ...p, playerId: randomUUID() }]) },
    ],
    ['a non-uuid player', { participants: [{ playerId: 'bob', ticketId: randomUUID(), team: 0 }] }],
    [
      'an uppercase uuid',
      { participants: [{ playerId: randomUUID().toUpperCase(), ticketId: randomUUID(), team: 0 }] },
    ],
    [
      'a negative team',
      { participants: [{ playerId: randomUUID(), ticketId: randomUUID(), team: -1 }] },
    ],
    [
      'a fractional team',
      { participants: [{ playerId: randomUUID(), ticketId: randomUUID(), team: 0.5 }] },
    ],
    ['a non-uuid id', { id: 'match-1' }],
    ['an empty mode', { mode: '' }],
    ['a mode longer than 64 characters', { mode: 'x'.repeat(65) }],
    ['a region with surrounding whitespace', { region: 'eu-west ' }],
  ])('refuses %s with INVALID_ARGUMENT', (_, overrides) => {
    expect(codeOf(() => newMatch(overrides))).toBe('INVALID_ARGUMENT');
  });

  it('refuses an invalid now', () => {
    expect(
      codeOf(() =>
        createMatch(
          { id: randomUUID(), mode: 'duel', region: 'eu', participants: newParticipants() },
          new Date('nope'),
        ),
      ),
    ).toBe('INVALID_ARGUMENT');
  });
});

describe(transitionMatch.name, () => {
  const at = (state: MatchState): MatchSnapshot => ({ ...newMatch().match, state, revision: 5 });

  it.each(MATCH_STATES.flatMap((from) => MATCH_STATES.map((to) => [from, to] as const)))(
    '%s -> %s: legal ones raise the revision by exactly 1, illegal ones throw ILLEGAL_TRANSITION',
    (from, to) => {
      const match = at(from);
      if (!canTransitionMatch(from, to)) {
        expect(codeOf(() => transitionMatch(match, commandTo(to), later(1)))).toBe(
          'ILLEGAL_TRANSITION',
        );
        return;
      }
      const { match: next, events } = transitionMatch(match, commandTo(to), later(1));
      expect(next).toMatchObject({
        state: to,
        revision: 6,
        stateChangedAt: later(1),
        participants: match.participants,
      });
      expect(events).toEqual([
        expect.objectContaining({
          revision: 6,
          occurredAt: later(1),
          payload: expect.objectContaining({ from, to }),
        }),
      ]);
    },
  );

  it('walks the forward chain addressing every participant, no-shows included, at every step', () => {
    let { match } = newMatch({ participants: newParticipants(5) });
    const everyone = match.participants.map((p) => p.playerId).sort();
    for (const to of ['PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS', 'COMPLETED'] as const) {
      const change = transitionMatch(match, { to }, later(match.revision));
      expect(change.match.revision).toBe(match.revision + 1);
      expect([...change.events[0]!.playerIds].sort()).toEqual(everyone);
      expect(change.events[0]!.payload.participants).toEqual(match.participants);
      match = change.match;
    }
    expect(match).toMatchObject({ state: 'COMPLETED', revision: 5 });
  });

  it("records the server's region at PROCESS_READY and carries it in every later event", () => {
    const { match } = newMatch();
    expect(match.serverRegion).toBeUndefined();
    const ready = transitionMatch(
      match,
      { to: 'PROCESS_READY', serverRegion: 'us-east' },
      later(1),
    );
    expect(ready.match).toMatchObject({ region: 'eu-west', serverRegion: 'us-east' });
    expect(ready.events[0]!.payload).toMatchObject({ region: 'eu-west', serverRegion: 'us-east' });
    const failed = transitionMatch(ready.match, { to: 'FAILED', reason: 'SERVER_LOST' }, later(2));
    expect(failed.events[0]!.payload.serverRegion).toBe('us-east');
    expect(
      codeOf(() => transitionMatch(match, { to: 'PROCESS_READY', serverRegion: '' }, later(1))),
    ).toBe('INVALID_ARGUMENT');
  });

  it('records why a match failed or was cancelled, in the snapshot and the event', () => {
    const { match } = newMatch();
    const failed = transitionMatch(match, { to: 'FAILED', reason: 'ALLOCATION_FAILED' }, later(1));
    expect(failed.match.failureReason).toBe('ALLOCATION_FAILED');
    expect(failed.events[0]!.payload.reason).toBe('ALLOCATION_FAILED');
    const cancelled = transitionMatch(
      match,
      { to: 'CANCELLED', reason: 'OPERATOR_CANCELLED' },
      later(1),
    );
    expect(cancelled.match.failureReason).toBe('OPERATOR_CANCELLED');
    expect(
      'reason' in transitionMatch(match, { to: 'PROCESS_READY' }, later(1)).events[0]!.payload,
    ).toBe(false);
  });

  it.each([
    ['no reason', { to: 'FAILED' }],
    ['a cancel reason on FAILED', { to: 'FAILED', reason: 'OPERATOR_CANCELLED' }],
    ['a free-text reason', { to: 'CANCELLED', reason: 'because' }],
  ])('refuses a terminal command with %s', (_, command) => {
    expect(
      codeOf(() => transitionMatch(newMatch().match, command as unknown as MatchCommand, later(1))),
    ).toBe('INVALID_ARGUMENT');
  });

  it('refuses to go nowhere: the same state again is illegal, not a silent no-op', () => {
    const ready = transitionMatch(newMatch().match, { to: 'PROCESS_READY' }, later(1)).match;
    expect(codeOf(() => transitionMatch(ready, { to: 'PROCESS_READY' }, later(2)))).toBe(
      'ILLEGAL_TRANSITION',
    );
  });

  it('carries the states in the error for callers that want to tell a replay from a conflict', () => {
    const done = transitionMatch(
      newMatch().match,
      { to: 'CANCELLED', reason: 'OPERATOR_CANCELLED' },
      later(1),
    ).match;
    expect(() => transitionMatch(done, { to: 'FAILED', reason: 'SERVER_LOST' }, later(2))).toThrow(
      expect.objectContaining({
        code: 'ILLEGAL_TRANSITION',
        details: expect.objectContaining({ from: 'CANCELLED', to: 'FAILED' }),
      }),
    );
  });

  it('leaves its input untouched', () => {
    const { match } = newMatch();
    const copy = structuredClone(match);
    transitionMatch(match, { to: 'PROCESS_READY' }, later(1));
    expect(match).toEqual(copy);
  });

  it('refuses a revision that has no exact successor and an invalid now', () => {
    const match = { ...newMatch().match, revision: Number.MAX_SAFE_INTEGER };
    expect(codeOf(() => transitionMatch(match, { to: 'PROCESS_READY' }, later(1)))).toBe(
      'REVISION_OVERFLOW',
    );
    expect(
      codeOf(() =>
        transitionMatch(newMatch().match, { to: 'PROCESS_READY' }, new Date(Number.NaN)),
      ),
    ).toBe('INVALID_ARGUMENT');
  });
});
