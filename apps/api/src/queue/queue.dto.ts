import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import type { CreatePartyTicketRequest, CreateTicketRequest } from '@matchplane/contracts';

export class CreateTicketBody implements CreateTicketRequest {
  @ApiProperty({ description: 'A configured queue mode (GET /v1/queue/options)', example: 'duel' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: 'mode must be a mode name (lowercase letters, digits, "-", "_")',
  })
  mode!: string;
}

export class CreatePartyTicketBody extends CreateTicketBody implements CreatePartyTicketRequest {}
