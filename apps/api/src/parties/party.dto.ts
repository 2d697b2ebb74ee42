import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import type { JoinPartyRequest } from '@matchplane/contracts';
import { INVITE_CODE_PATTERN } from './party.service';

export class JoinPartyBody implements JoinPartyRequest {
  @ApiProperty({
    description: 'The invite code the leader got from POST /v1/parties',
    example: 'mpi_3q2-7wEVR_BtkS1W9z-ZfA',
  })
  @IsString()
  @Matches(INVITE_CODE_PATTERN, { message: 'inviteCode must be a party invite code (mpi_...)' })
  inviteCode!: string;
}
