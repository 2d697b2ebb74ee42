import { randomUUID } from 'node:crypto';
import { DomainError } from '../shared/domain.error';
import { createMatch, transitionMatch, type MatchSnapshot } from './match.aggregate';
import { foldMatchEvents, type MatchHistoryEvent } from './match-events.reducer';
import { changePresence, presenceExits } from './match-presence';

const t0 = new Date('2026-12-06T10:00:00.000Z');
const deadline = new Date(t0.getTime() + 60_000);

function running(): { match: MatchSnapshot; history: MatchHistoryEvent[] } {
  const participants = [0, 1].map((team) => ({
    playerId: randomUUID(),
    ticketId: randomUUID(),
    team,
  }));
  const created = createMatch(
    { id: randomUUID(), mode: 'duel', region: 'eu-west', participants },
    t0,
  );
  let match = created.match;
  const history: MatchHistoryEvent[] = [...created.events];
  for (const to of ['PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS'] as const) {
    const change = transitionMatch(match, { to }, t0);
    match = change.match;
    history.push(...change.events);
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

describe('match presence', () => {
  it('moves connected -> LEFT -> REJOINED -> LEFT -> ABANDONED, and ABANDONED is final', () => {
    expect(presenceExits(undefined)).toEqual(['LEFT']);
    expect(presenceExits('LEFT')).toEqual(['REJOINED', 'ABANDONED']);
    expect(presenceExits('REJOINED')).toEqual(['LEFT']);
    expect(presenceExits('ABANDONED')).toEqual([]);
  });

  it('bumps the revision, keeps the state, addresses every participant, and folds in order', () => {
    const { match, history } = running();
    const playerId = match.participants[0]!.playerId;
    const left = changePresence(match, playerId, undefined, 'LEFT', t0, deadline);
    const back = changePresence(left.match, playerId, 'LEFT', 'REJOINED', t0);
    const completed = transitionMatch(back.match, { to: 'COMPLETED' }, t0);
    expect(left.match).toMatchObject({ state: 'IN_PROGRESS', revision: match.revision + 1 });
    expect(left.events[0]).toMatchObject({
      event: 'match.presence_changed',
      revision: match.revision + 1,
      payload: { playerId, presence: 'LEFT', rejoinDeadline: deadline.toISOString() },
    });
    expect([...left.events[0]!.playerIds].sort()).toEqual(
      match.participants.map((p) => p.playerId).sort(),
    );
    expect(
      foldMatchEvents([...history, ...left.events, ...back.events, ...completed.events]),
    ).toStrictEqual(completed.match);
    // Out of order, the fold refuses it.
    expect(() => foldMatchEvents([...history, ...back.events])).toThrow(DomainError);
  });

  it('refuses a change outside IN_PROGRESS, of a stranger, off the presence graph, or with a misplaced deadline', () => {
    const { match } = running();
    const playerId = match.participants[0]!.playerId;
    const completed = transitionMatch(match, { to: 'COMPLETED' }, t0).match;
    expect(
      fails(() => changePresence(completed, playerId, undefined, 'LEFT', t0, deadline)).code,
    ).toBe('ILLEGAL_TRANSITION');
    expect(
      fails(() => changePresence(match, randomUUID(), undefined, 'LEFT', t0, deadline)).code,
    ).toBe('INVALID_ARGUMENT');
    expect(fails(() => changePresence(match, playerId, undefined, 'REJOINED', t0)).code).toBe(
      'ILLEGAL_TRANSITION',
    );
    expect(
      fails(() => changePresence(match, playerId, 'ABANDONED', 'LEFT', t0, deadline)).code,
    ).toBe('ILLEGAL_TRANSITION');
    expect(fails(() => changePresence(match, playerId, undefined, 'LEFT', t0)).code).toBe(
      'INVALID_ARGUMENT',
    );
  });
});
