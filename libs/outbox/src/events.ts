import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MATCH_STATES, TICKET_STATES, type MatchState, type TicketState } from '@matchplane/domain';

/** Every event type an outbox row may carry; the dispatcher refuses to start if one has no subscriber. */
export const EVENT_TYPES = ['match.state_changed', 'ticket.state_changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const AGGREGATE_TYPE_OF = {
  'match.state_changed': 'match',
  'ticket.state_changed': 'ticket',
} as const satisfies Record<EventType, string>;

export class ParticipantPayload {
  @IsUUID()
  playerId!: string;

  @IsUUID()
  ticketId!: string;

  @IsInt()
  @Min(0)
  team!: number;
}

export class MatchStateChangedPayload {
  @IsUUID()
  matchId!: string;

  @ValidateIf((_, value) => value !== null)
  @IsIn(MATCH_STATES)
  from!: MatchState | null;

  @IsIn(MATCH_STATES)
  to!: MatchState;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  mode!: string;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  region!: string;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => ParticipantPayload)
  participants!: ParticipantPayload[];
}

export class TicketStateChangedPayload {
  @IsUUID()
  ticketId!: string;

  @ValidateIf((_, value) => value !== null)
  @IsIn(TICKET_STATES)
  from!: TicketState | null;

  @IsIn(TICKET_STATES)
  to!: TicketState;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  mode!: string;

  @IsOptional()
  @IsUUID()
  matchId?: string;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export const PAYLOAD_CLASS = {
  'match.state_changed': MatchStateChangedPayload,
  'ticket.state_changed': TicketStateChangedPayload,
} as const satisfies Record<EventType, new () => object>;

export interface EventPayloads {
  'match.state_changed': MatchStateChangedPayload;
  'ticket.state_changed': TicketStateChangedPayload;
}

/** The id inside a payload that must equal the envelope's aggregate id. */
export function payloadAggregateId(event: EventType, payload: EventPayloads[EventType]): string {
  switch (event) {
    case 'match.state_changed':
      return (payload as MatchStateChangedPayload).matchId;
    case 'ticket.state_changed':
      return (payload as TicketStateChangedPayload).ticketId;
  }
}
