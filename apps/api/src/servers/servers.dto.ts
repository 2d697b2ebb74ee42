import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  IsUUID,
  Matches,
  Max,
  Min,
} from 'class-validator';
import type {
  InitialConnectRequest,
  MatchResultRequest,
  RegisterServerRequest,
} from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';

export class RegisterServerBody implements RegisterServerRequest {
  @ApiProperty({ description: 'The server protocol version the server speaks', example: 1 })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  protocolVersion!: number;

  @ApiProperty({ description: 'The image (or build) the server runs', example: 'sha256:0a1b…' })
  @IsString()
  @Matches(/^[\x21-\x7e]{1,255}$/, {
    message: 'imageDigest must be 1-255 visible ASCII characters',
  })
  imageDigest!: string;
}

export class InitialConnectBody implements InitialConnectRequest {
  @ApiProperty({
    description: 'Participants connected before the connect deadline',
    type: [String],
    format: 'uuid',
  })
  @IsArray()
  @ArrayMaxSize(1_000)
  @ArrayUnique({ message: 'connectedPlayerIds must not repeat a player' })
  @IsUUID('all', { each: true, message: 'each connectedPlayerIds entry must be a UUID' })
  connectedPlayerIds!: string[];
}

export class MatchResultBody implements MatchResultRequest {
  @ApiProperty({ enum: ['COMPLETED', 'FAILED'] })
  @IsIn(['COMPLETED', 'FAILED'])
  outcome!: 'COMPLETED' | 'FAILED';

  @ApiPropertyOptional({ description: 'Winning team; absent for a draw' })
  @IsOptionalNonNull()
  @IsInt()
  @Min(0)
  @Max(1_000)
  winningTeam?: number;

  @ApiPropertyOptional({
    description: 'Per-player scores by player id',
    type: 'object',
    additionalProperties: { type: 'number' },
  })
  @IsOptionalNonNull()
  @IsObject()
  scores?: Record<string, number>;
}
