import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, Matches } from 'class-validator';
import type {
  CreatePartyTicketRequest,
  CreateTicketRequest,
  TicketAttributeValue,
} from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';

export class CreateTicketBody implements CreateTicketRequest {
  @ApiProperty({ description: 'A configured queue mode (GET /v1/queue/options)', example: 'duel' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: 'mode must be a mode name (lowercase letters, digits, "-", "_")',
  })
  mode!: string;

  // Checked against the mode's declaration by QueuePolicy.attributes (it depends on the mode).
  @ApiPropertyOptional({
    description:
      "The ticket's attributes as its mode declares them (GET /v1/queue/options, modes[].attributes); unknown, ill-typed or out-of-range ones are a 400 naming the attribute",
    example: { buildVersion: '1.5.0' },
    type: 'object',
    additionalProperties: {
      oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'array', items: { type: 'string' } }],
    },
  })
  @IsOptionalNonNull()
  @IsObject({
    message: 'attributes must be an object of name -> string, number or list of strings',
  })
  attributes?: Record<string, TicketAttributeValue>;
}

export class CreatePartyTicketBody extends CreateTicketBody implements CreatePartyTicketRequest {
  // Checked against the mode's roles rule and the party's members by the queue service.
  @ApiPropertyOptional({
    description:
      "Each member's roles by player id, for a mode with a roles rule (GET /v1/queue/options); a member left out plays the roles in attributes. A 400 names memberRoles.<playerId>",
    example: { '7d0c1f5e-1b1a-4a63-9a7e-3f1c1e6b2a10': ['healer'] },
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
  })
  @IsOptionalNonNull()
  @IsObject({ message: 'memberRoles must be an object of player id -> list of roles' })
  memberRoles?: Record<string, string[]>;
}
