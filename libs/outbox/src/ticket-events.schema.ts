import { IsIn } from 'class-validator';
import {
  canTransitionTicket,
  TicketReason,
  ticketEventHasMatch,
  ticketReasonsFor,
  TICKET_STATES,
  type TicketState,
  type TicketStateChangedPayload,
} from '@matchplane/domain';
import {
  IfPresent,
  IsCanonicalUuid,
  IsIsoInstant,
  IsLabel,
  NullOrIn,
  reasonProblems,
  transitionProblems,
  type EnvelopeProblem,
} from './event-schema.parts';

/** `ticket.state_changed`: the ticket entered `to`, naming its match whenever the transition concerns one. */
export class TicketStateChangedSchema {
  @IsCanonicalUuid()
  ticketId!: string;

  @NullOrIn(TICKET_STATES)
  from!: TicketState | null;

  @IsIn(TICKET_STATES)
  to!: TicketState;

  @IsLabel()
  mode!: string;

  @IsIsoInstant()
  enqueuedAt!: string;

  @IfPresent()
  @IsCanonicalUuid()
  matchId?: string;

  @IfPresent()
  @IsIn(Object.values(TicketReason))
  reason?: TicketReason;
}

export function ticketRules(payload: TicketStateChangedPayload): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const { from, to, reason, matchId } = payload;
  const legal = from === null ? to === 'SEARCHING' : canTransitionTicket(from, to);
  problems.push(...transitionProblems('ticket', from, to, legal));
  const needsMatch = ticketEventHasMatch(from, to);
  if (needsMatch && matchId === undefined) {
    problems.push({
      field: 'payload.matchId',
      message: `${String(from)} -> ${to} must name its match`,
    });
  } else if (!needsMatch && matchId !== undefined) {
    problems.push({
      field: 'payload.matchId',
      message: `${String(from)} -> ${to} concerns no match`,
    });
  }
  problems.push(...reasonProblems(ticketReasonsFor(from, to), reason, `${String(from)} -> ${to}`));
  return problems;
}
