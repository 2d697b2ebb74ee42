import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import type { ProbeAnswerRequest } from '@matchplane/contracts';
import { IsUuidInput } from '../http/uuid-input';

export class ProbeAnswerBody implements ProbeAnswerRequest {
  @ApiProperty({ format: 'uuid' })
  @IsUuidInput()
  challengeId!: string;

  @ApiProperty({ description: 'The nonce of the challenge, echoed back unchanged' })
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,128}$/, {
    message: 'nonce must be the base64url nonce of the challenge',
  })
  nonce!: string;
}
