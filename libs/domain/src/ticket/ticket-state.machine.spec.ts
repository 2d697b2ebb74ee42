import {
  canTransitionTicket,
  isTerminalTicketState,
  LIVE_TICKET_STATES,
  ticketEventHasMatch,
  ticketReasonsFor,
  TICKET_STATES,
  type TicketState,
} from './ticket-state.machine';

/** DESIGN.md's ticket lifecycle plus the requeue, written out independently of the implementation. */
const LEGAL: readonly string[] = [
  'SEARCHING->MATCHED',
  'SEARCHING->CANCELLED',
  'SEARCHING->EXPIRED',
  'MATCHED->ASSIGNED',
  'MATCHED->SEARCHING',
  'MATCHED->CANCELLED',
  'MATCHED->FAILED',
  'ASSIGNED->CONNECTED',
  'ASSIGNED->SEARCHING',
  'ASSIGNED->CANCELLED',
  'ASSIGNED->FAILED',
  'CONNECTED->COMPLETED',
  'CONNECTED->CANCELLED',
  'CONNECTED->FAILED',
];

describe('ticket state machine', () => {
  it.each(TICKET_STATES.flatMap((from) => TICKET_STATES.map((to) => [from, to] as const)))(
    '%s -> %s is legal exactly when the design says so',
    (from, to) => {
      expect(canTransitionTicket(from, to)).toBe(LEGAL.includes(`${from}->${to}`));
    },
  );

  it('has no way out of COMPLETED, CANCELLED, EXPIRED and FAILED, and four live states', () => {
    expect(TICKET_STATES.filter(isTerminalTicketState)).toEqual([
      'COMPLETED',
      'CANCELLED',
      'EXPIRED',
      'FAILED',
    ]);
    expect([...LIVE_TICKET_STATES]).toEqual(['SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED']);
  });

  it.each([
    [null, 'SEARCHING', false],
    ['SEARCHING', 'MATCHED', true],
    ['SEARCHING', 'CANCELLED', false],
    ['SEARCHING', 'EXPIRED', false],
    ['MATCHED', 'ASSIGNED', true],
    ['MATCHED', 'SEARCHING', true],
    ['ASSIGNED', 'FAILED', true],
    ['CONNECTED', 'COMPLETED', true],
  ] as const)('an event %s -> %s names a match: %s', (from, to, expected) => {
    expect(ticketEventHasMatch(from, to as TicketState)).toBe(expected);
  });

  it('asks for a reason exactly where one explains the change', () => {
    expect(ticketReasonsFor(null, 'SEARCHING')).toEqual([]);
    expect(ticketReasonsFor('MATCHED', 'SEARCHING')).toEqual([
      'MATCH_FAILED',
      'BACKFILL_CANCELLED',
      'MATCH_CANCELLED',
    ]);
    expect(ticketReasonsFor('SEARCHING', 'CANCELLED')).toEqual([
      'PLAYER_CANCELLED',
      'PARTY_MEMBER_CANCELLED',
      'OPERATOR_RELEASED',
      'RULES_CHANGED',
    ]);
    expect(ticketReasonsFor('MATCHED', 'CANCELLED')).toContain('ACCEPTANCE_DECLINED');
    expect(ticketReasonsFor('MATCHED', 'FAILED')).toEqual(['MATCH_FAILED', 'ACCEPTANCE_TIMEOUT']);
    expect(ticketReasonsFor('ASSIGNED', 'CANCELLED')).toEqual([
      'PLAYER_CANCELLED',
      'MATCH_CANCELLED',
      'OPERATOR_RELEASED',
    ]);
    expect(ticketReasonsFor('SEARCHING', 'EXPIRED')).toEqual([
      'HEARTBEAT_TIMEOUT',
      'PARTY_MEMBER_EXPIRED',
      'SEARCH_TIMED_OUT',
    ]);
    expect(ticketReasonsFor('ASSIGNED', 'FAILED')).toEqual(['NO_SHOW', 'MATCH_FAILED']);
    expect(ticketReasonsFor('CONNECTED', 'FAILED')).toEqual(['MATCH_FAILED', 'ABANDONED']);
    expect(ticketReasonsFor('ASSIGNED', 'CONNECTED')).toEqual([]);
  });
});
