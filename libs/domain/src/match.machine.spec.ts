import { randomUUID } from 'node:crypto';
import { DomainError } from './domain.error';
import {
  canTransitionMatch,
  createMatch,
  foldMatchEvents,
  MATCH_STATES,
  TERMINAL_MATCH_STATES,
  transitionMatch,
  type MatchState,
  type MatchStateChanged,
} from './match.machine';

const participants = [
  { playerId: randomUUID(), ticketId: randomUUID(), team: 0 },
  { playerId: randomUUID(), ticketId: randomUUID(), team: 1 },
];
const t0 = new Date('2026-12-01T10:00:00Z');

function newMatch() {
  return createMatch({ id: randomUUID(), mode: 'duel', region: 'eu-west', participants }, t0);
}

/** A small deterministic PRNG so a failing sequence can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('match state machine', () => {
  it('creates a match at revision 1 in ALLOCATING with one event addressing every participant', () => {
    const { match, events } = newMatch();
    expect(match).toMatchObject({ state: 'ALLOCATING', revision: 1 });
    expect(events).toEqual([expect.objectContaining({ revision: 1, from: null, to: 'ALLOCATING', participants })]);
  });

  it('refuses a match with a player twice', () => {
    const twice = [participants[0]!, { ...participants[0]!, ticketId: randomUUID(), team: 1 }];
    expect(() => createMatch({ id: randomUUID(), mode: 'duel', region: 'eu', participants: twice }, t0)).toThrow(DomainError);
  });

  it('walks the forward chain, raising the revision by exactly one per transition', () => {
    let { match } = newMatch();
    for (const to of ['PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS', 'COMPLETED'] as const) {
      const change = transitionMatch(match, to, t0);
      expect(change.match.revision).toBe(match.revision + 1);
      expect(change.events).toEqual([expect.objectContaining({ from: match.state, to, revision: change.match.revision })]);
      match = change.match;
    }
  });

  it.each(MATCH_STATES.flatMap((from) => MATCH_STATES.map((to) => [from, to] as const)))(
    '%s -> %s is legal exactly when the design says so',
    (from, to) => {
      const forward: Record<string, string> = {
        ALLOCATING: 'PROCESS_READY',
        PROCESS_READY: 'ASSIGNMENT_READY',
        ASSIGNMENT_READY: 'IN_PROGRESS',
        IN_PROGRESS: 'COMPLETED',
      };
      const legal = !TERMINAL_MATCH_STATES.has(from) && (forward[from] === to || to === 'FAILED' || to === 'CANCELLED');
      expect(canTransitionMatch(from, to)).toBe(legal);
      const at = { ...newMatch().match, state: from };
      if (legal) expect(transitionMatch(at, to, t0).match.state).toBe(to);
      else expect(() => transitionMatch(at, to, t0)).toThrow(expect.objectContaining({ code: 'ILLEGAL_TRANSITION' }));
    },
  );

  it('folds random legal histories back to the final snapshot', () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      const random = prng(seed);
      let { match, events } = newMatch();
      const history: MatchStateChanged[] = [...events];
      while (!TERMINAL_MATCH_STATES.has(match.state)) {
        const options = MATCH_STATES.filter((to) => canTransitionMatch(match.state, to));
        const to: MatchState = options[Math.floor(random() * options.length)]!;
        ({ match, events } = transitionMatch(match, to, new Date(t0.getTime() + history.length), random() < 0.5 ? 'why' : undefined));
        history.push(...events);
      }
      expect(foldMatchEvents(history)).toEqual(match);
    }
  });

  it('rejects a history with a gap, a repeat or a start past revision 1', () => {
    const created = newMatch();
    const a = transitionMatch(created.match, 'PROCESS_READY', t0);
    const b = transitionMatch(a.match, 'ASSIGNMENT_READY', t0);
    expect(() => foldMatchEvents([...created.events, ...b.events])).toThrow(expect.objectContaining({ code: 'EVENT_OUT_OF_ORDER' }));
    expect(() => foldMatchEvents([...created.events, ...a.events, ...a.events])).toThrow(DomainError);
    expect(() => foldMatchEvents(a.events)).toThrow(DomainError);
    expect(() => foldMatchEvents([])).toThrow(DomainError);
  });
});
