import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { MAX_BACKFILL_SLOTS } from '@matchplane/domain';
import type {
  BackfillAcceptRequest,
  BackfillConnectRequest,
  BackfillRequestBody as BackfillRequest,
  InitialConnectRequest,
  MatchResultRequest,
  RegisterServerRequest,
} from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';
import { IsUuidInput } from '../http/uuid-input';

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
  @IsUuidInput({ each: true, message: 'each connectedPlayerIds entry must be a UUID' })
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

export class BackfillRequestBody implements BackfillRequest {
  @ApiProperty({ description: '0-based team index of the match', example: 1 })
  @IsInt()
  @Min(0)
  @Max(1_000)
  team!: number;

  @ApiProperty({ description: 'How many players to add (at most the open places)', example: 1 })
  @IsInt()
  @Min(1)
  @Max(MAX_BACKFILL_SLOTS)
  slots!: number;

  @ApiPropertyOptional({
    description: 'How long the matcher may search before the request EXPIRES (default 30)',
    minimum: 1,
    maximum: 300,
  })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(300)
  timeoutSeconds?: number;
}

export class BackfillAcceptBody implements BackfillAcceptRequest {
  @ApiProperty({ description: 'The roster revision the server fetched and verified', example: 2 })
  @IsInt()
  @Min(2)
  @Max(2 ** 31 - 1)
  rosterRevision!: number;
}

export class BackfillConnectBody implements BackfillConnectRequest {
  @ApiProperty({
    description: 'The added players who connected',
    type: [String],
    format: 'uuid',
  })
  @IsArray()
  @ArrayMaxSize(MAX_BACKFILL_SLOTS)
  @ArrayUnique({ message: 'connectedPlayerIds must not repeat a player' })
  @IsUuidInput({ each: true, message: 'each connectedPlayerIds entry must be a UUID' })
  connectedPlayerIds!: string[];
}
