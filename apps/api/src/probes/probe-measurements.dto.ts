import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsNumber,
  IsString,
  MaxLength,
} from 'class-validator';
import type { SignedProbeMeasurement } from '@matchplane/contracts';

/** The measurement exactly as the edge signed it; its bytes and MAC are checked by the recorder. */
export class ProbeMeasurementBody implements SignedProbeMeasurement {
  @ApiProperty({ format: 'uuid' })
  @IsString()
  @MaxLength(64)
  measurementId!: string;

  @ApiProperty({ format: 'uuid' })
  @IsString()
  @MaxLength(64)
  playerId!: string;

  @ApiProperty()
  @IsString()
  @MaxLength(64)
  region!: string;

  @ApiProperty({ type: [Number], description: 'RTT samples (ms) the edge measured' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(16)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { each: true })
  samplesMs!: number[];

  @ApiProperty({ format: 'date-time' })
  @IsString()
  @MaxLength(40)
  measuredAt!: string;

  @ApiProperty()
  @IsString()
  @MaxLength(64)
  keyId!: string;

  @ApiProperty({ description: 'base64url HMAC-SHA256 (docs/PROBES.md)' })
  @IsString()
  @MaxLength(64)
  signature!: string;
}
