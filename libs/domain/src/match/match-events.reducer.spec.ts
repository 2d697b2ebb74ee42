import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import {
  addParticipants,
  createMatch,
  transitionMatch,
  type MatchCommand,
  type MatchSnapshot,
} from './match.aggregate';
import { foldMatchEvents, type MatchHistoryEvent } from './match-events.reducer';
import type { MatchStateChanged } from './match.events';
import {
  MatchCancelReason,
  MatchFailureReason,
  matchExits,
  TERMINAL_MATCH_STATES,
  type MatchState,
} from './match-state.machine';

const t0 = new Date('2026-12-01T10:00:00.000Z');

/** A small deterministic PRNG, so a failing sequence can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

function newMatch(players = 4, awaitingAcceptance = false) {
  const participants = Array.from({ length: players }, (_, index) => ({
    playerId: randomUUID(),
    ticketId: randomUUID(),
    team: index % 2,
  }));
  return createMatch(
    { id: randomUUID(), mode: 'duel', region: 'eu-west', participants, awaitingAcceptance },
    t0,
  );
}

function randomCommand(random: () => number, from: MatchState): MatchCommand {
  const to = pick(random, matchExits(from));
  switch (to) {
    case 'FAILED':
      return { to, reason: pick(random, Object.values(MatchFailureReason)) };
    case 'CANCELLED':
      return { to, reason: pick(random, Object.values(MatchCancelReason)) };
    case 'PROCESS_READY': {
      // The registering server's region: the match's own, a fallback's, or (older servers) none.
      const serverRegion = pick(random, ['eu-west', 'us-east', undefined]);
      return serverRegion === undefined ? { to } : { to, serverRegion };
    }
    case 'ALLOCATING':
    case 'ASSIGNMENT_READY':
    case 'IN_PROGRESS':
    case 'COMPLETED':
      return { to };
    case 'AWAITING_ACCEPTANCE':
      throw new Error('nothing leads back to AWAITING_ACCEPTANCE');
  }
}

/** A random legal history, sometimes stopping before the match ends. */
function randomHistory(seed: number): { match: MatchSnapshot; history: MatchStateChanged[] } {
  const random = prng(seed);
  // Some matches start with a ready check, so histories through AWAITING_ACCEPTANCE are folded too.
  let { match, events } = newMatch(1 + Math.floor(random() * 6), random() < 0.3);
  const history = [...events];
  while (!TERMINAL_MATCH_STATES.has(match.state) && random() < 0.9) {
    ({ match, events } = transitionMatch(
      match,
      randomCommand(random, match.state),
      new Date(t0.getTime() + history.length * 1000),
    ));
    history.push(...events);
  }
  return { match, history };
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

describe(foldMatchEvents.name, () => {
  it('folds 300 random legal histories back to exactly the final snapshot', () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const { match, history } = randomHistory(seed);
      expect(foldMatchEvents(history)).toStrictEqual(match);
    }
  });

  it('resumes from a snapshot with the events after it, as a reconnecting client does', () => {
    for (let seed = 1; seed <= 50; seed += 1) {
      const { match, history } = randomHistory(seed);
      const cut = Math.max(1, Math.floor(history.length / 2));
      const seen = foldMatchEvents(history.slice(0, cut));
      expect(foldMatchEvents(history.slice(cut), seen)).toStrictEqual(match);
    }
  });

  it('accepts a bigint revision, as the outbox may hand one back', () => {
    const { history, match } = randomHistory(7);
    const asBigints: MatchHistoryEvent[] = history.map((event) => ({
      ...event,
      revision: BigInt(event.revision),
    }));
    expect(foldMatchEvents(asBigints)).toStrictEqual(match);
  });

  function longHistory(): MatchStateChanged[] {
    const created = newMatch();
    const a = transitionMatch(created.match, { to: 'PROCESS_READY' }, t0);
    const b = transitionMatch(a.match, { to: 'ASSIGNMENT_READY' }, t0);
    const c = transitionMatch(b.match, { to: 'IN_PROGRESS' }, t0);
    return [...created.events, ...a.events, ...b.events, ...c.events];
  }

  it.each([
    ['a gap', (h: MatchStateChanged[]) => [h[0]!, h[1]!, h[3]!]],
    ['a repeated revision', (h: MatchStateChanged[]) => [h[0]!, h[1]!, h[1]!, h[2]!]],
    ['two revisions swapped', (h: MatchStateChanged[]) => [h[0]!, h[2]!, h[1]!, h[3]!]],
    ['a history that starts past revision 1', (h: MatchStateChanged[]) => h.slice(1)],
    ['a fractional revision', (h: MatchStateChanged[]) => [h[0]!, { ...h[1]!, revision: 1.5 }]],
  ])('rejects %s with REVISION_GAP', (_, mangle) => {
    expect(fails(() => foldMatchEvents(mangle(longHistory()))).code).toBe('REVISION_GAP');
  });

  it('rejects a resumed history that does not start right after the snapshot', () => {
    const history = longHistory();
    const seen = foldMatchEvents(history.slice(0, 2));
    expect(fails(() => foldMatchEvents(history.slice(3), seen)).code).toBe('REVISION_GAP');
    expect(fails(() => foldMatchEvents(history.slice(1), seen)).code).toBe('REVISION_GAP');
  });

  it('rejects an empty history', () => {
    expect(fails(() => foldMatchEvents([])).code).toBe('INCONSISTENT_HISTORY');
  });

  it.each([
    [
      'an event of another match',
      (h: MatchStateChanged[]) => [h[0]!, { ...h[1]!, aggregateId: randomUUID() }],
    ],
    ['a ticket event', (h: MatchStateChanged[]) => [h[0]!, { ...h[1]!, aggregateType: 'ticket' }]],
    [
      'a payload naming another match',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, matchId: randomUUID() } },
      ],
    ],
    [
      'a from that is not the current state',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, from: 'PROCESS_READY' as const } },
      ],
    ],
    [
      'a changed region',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, region: 'us-east' } },
      ],
    ],
    [
      'a server region that changes',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, serverRegion: 'us-east' } },
        { ...h[2]!, payload: { ...h[2]!.payload, serverRegion: 'eu-west' } },
      ],
    ],
    [
      'a server region that disappears',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, serverRegion: 'us-east' } },
        h[2]!,
      ],
    ],
    [
      'a changed roster',
      (h: MatchStateChanged[]) => [
        h[0]!,
        {
          ...h[1]!,
          payload: { ...h[1]!.payload, participants: h[1]!.payload.participants.slice(1) },
        },
      ],
    ],
    [
      'an event not addressed to every participant',
      (h: MatchStateChanged[]) => [h[0]!, { ...h[1]!, playerIds: h[1]!.playerIds.slice(1) }],
    ],
    [
      'a creation that is not null -> ALLOCATING',
      (h: MatchStateChanged[]) => [
        { ...h[0]!, payload: { ...h[0]!.payload, from: 'ALLOCATING' as const } },
      ],
    ],
    [
      'a reason on a non-terminal state',
      (h: MatchStateChanged[]) => [
        h[0]!,
        { ...h[1]!, payload: { ...h[1]!.payload, reason: 'SERVER_LOST' as const } },
      ],
    ],
    [
      'an invalid occurredAt',
      (h: MatchStateChanged[]) => [h[0]!, { ...h[1]!, occurredAt: new Date('nope') }],
    ],
  ])('rejects %s with INCONSISTENT_HISTORY', (_, mangle) => {
    expect(fails(() => foldMatchEvents(mangle(longHistory()) as MatchHistoryEvent[])).code).toBe(
      'INCONSISTENT_HISTORY',
    );
  });

  it('rejects an illegal transition recorded in the history', () => {
    const history = longHistory();
    const jump = { ...history[1]!, payload: { ...history[1]!.payload, to: 'COMPLETED' as const } };
    expect(fails(() => foldMatchEvents([history[0]!, jump])).code).toBe('ILLEGAL_TRANSITION');
  });

  it('rejects a terminal state without its reason', () => {
    const created = newMatch();
    const failed = transitionMatch(created.match, { to: 'FAILED', reason: 'SERVER_LOST' }, t0)
      .events[0]!;
    const { reason: _dropped, ...payload } = failed.payload;
    expect(fails(() => foldMatchEvents([...created.events, { ...failed, payload }])).code).toBe(
      'INCONSISTENT_HISTORY',
    );
  });

  describe('players added by a backfill', () => {
    function running() {
      const created = newMatch(4);
      let match = created.match;
      const history: MatchHistoryEvent[] = [...created.events];
      for (const to of ['PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS'] as const) {
        const change = transitionMatch(match, { to }, t0);
        match = change.match;
        history.push(...change.events);
      }
      return { match, history };
    }
    const newcomer = () => ({ playerId: randomUUID(), ticketId: randomUUID(), team: 1 });

    it('folds the grown roster, and later events carry it', () => {
      const { match, history } = running();
      const added = addParticipants(match, [newcomer()], randomUUID(), t0);
      const completed = transitionMatch(added.match, { to: 'COMPLETED' }, t0);
      expect(added.match.participants).toHaveLength(5);
      expect(added.match.state).toBe('IN_PROGRESS');
      expect(foldMatchEvents([...history, ...added.events, ...completed.events])).toStrictEqual(
        completed.match,
      );
    });

    it('refuses players added outside IN_PROGRESS, twice, or to a team the match lacks', () => {
      const { match } = running();
      const created = newMatch(2);
      expect(fails(() => addParticipants(created.match, [newcomer()], randomUUID(), t0)).code).toBe(
        'ILLEGAL_TRANSITION',
      );
      const twice = { ...newcomer(), playerId: match.participants[0]!.playerId };
      expect(fails(() => addParticipants(match, [twice], randomUUID(), t0)).code).toBe(
        'INVALID_ARGUMENT',
      );
      expect(
        fails(() => addParticipants(match, [{ ...newcomer(), team: 7 }], randomUUID(), t0)).code,
      ).toBe('INVALID_ARGUMENT');
    });

    it('refuses a history whose added players are not on the roster it carries', () => {
      const { match, history } = running();
      const added = addParticipants(match, [newcomer()], randomUUID(), t0).events[0]!;
      const shrunk = { ...added, payload: { ...added.payload, participants: match.participants } };
      expect(fails(() => foldMatchEvents([...history, shrunk])).code).toBe('INCONSISTENT_HISTORY');
    });
  });
});
