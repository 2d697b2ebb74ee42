import {
  canTransitionMatch,
  isMatchEndReason,
  isPlayerCausedFailure,
  isTerminalMatchState,
  MatchCancelReason,
  MatchFailureReason,
  matchFailureAllowsRequeue,
  matchReasonsFor,
  MATCH_STATES,
  TERMINAL_MATCH_STATES,
  type MatchState,
} from './match-state.machine';

/** DESIGN.md "Aggregates and states", written out independently of the implementation's table. */
const FORWARD: Partial<Record<MatchState, MatchState>> = {
  AWAITING_ACCEPTANCE: 'ALLOCATING',
  ALLOCATING: 'PROCESS_READY',
  PROCESS_READY: 'ASSIGNMENT_READY',
  ASSIGNMENT_READY: 'IN_PROGRESS',
  IN_PROGRESS: 'COMPLETED',
};
const TERMINAL: readonly MatchState[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

describe('match state machine', () => {
  it.each(MATCH_STATES.flatMap((from) => MATCH_STATES.map((to) => [from, to] as const)))(
    '%s -> %s is legal exactly when the design says so',
    (from, to) => {
      const legal =
        !TERMINAL.includes(from) && (FORWARD[from] === to || to === 'FAILED' || to === 'CANCELLED');
      expect(canTransitionMatch(from, to)).toBe(legal);
    },
  );

  it('knows exactly COMPLETED, FAILED and CANCELLED as terminal', () => {
    expect(MATCH_STATES.filter(isTerminalMatchState)).toEqual(TERMINAL);
    expect([...TERMINAL_MATCH_STATES].sort()).toEqual([...TERMINAL].sort());
  });

  it('asks a reason of FAILED and CANCELLED only, each from its own set', () => {
    expect(matchReasonsFor('FAILED')).toEqual(Object.values(MatchFailureReason));
    expect(matchReasonsFor('CANCELLED')).toEqual(Object.values(MatchCancelReason));
    for (const state of MATCH_STATES.filter((s) => s !== 'FAILED' && s !== 'CANCELLED')) {
      expect(matchReasonsFor(state)).toEqual([]);
    }
    expect(isMatchEndReason('NO_SHOW')).toBe(true);
    expect(isMatchEndReason('OPERATOR_CANCELLED')).toBe(true);
    expect(isMatchEndReason('no show')).toBe(false);
  });

  it('blames players for no-shows and departures only', () => {
    const blamed = Object.values(MatchFailureReason).filter(isPlayerCausedFailure);
    expect(blamed.sort()).toEqual(['NO_SHOW', 'PARTICIPANT_LEFT']);
  });

  it.each([
    ['ALLOCATING', 'ALLOCATION_FAILED', true],
    ['AWAITING_ACCEPTANCE', 'LIFECYCLE_TIMEOUT', true],
    ['AWAITING_ACCEPTANCE', 'PARTICIPANT_LEFT', false],
    ['PROCESS_READY', 'SERVER_REGISTRATION_TIMEOUT', true],
    ['PROCESS_READY', 'SERVER_LOST', true],
    ['ALLOCATING', 'PARTICIPANT_LEFT', false],
    ['ASSIGNMENT_READY', 'SERVER_LOST', false],
    ['ASSIGNMENT_READY', 'NO_SHOW', false],
    ['IN_PROGRESS', 'SERVER_REPORTED_FAILURE', false],
  ] as const)(
    'a match failing from %s with %s requeues its tickets: %s',
    (from, reason, expected) => {
      expect(matchFailureAllowsRequeue(from, reason)).toBe(expected);
    },
  );
});
