import { Type } from 'class-transformer';
import { IsInt, IsObject, IsString, Matches, Min, ValidateNested } from 'class-validator';
import type { ProbeChallenge } from '@matchplane/join-auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_MESSAGE = {
  message: 'playerId must be a lowercase UUID (the player id of the session)',
};
const REGION = /^[a-z0-9_-]{1,64}$/;
const REGION_MESSAGE = { message: 'region must be a region name, e.g. eu-west' };

export class ChallengeRequestBody {
  @Matches(UUID, UUID_MESSAGE)
  playerId!: string;

  @Matches(REGION, REGION_MESSAGE)
  region!: string;
}

/** The challenge exactly as the edge issued it; its signature is checked by the edge. */
export class EchoedChallenge implements ProbeChallenge {
  @IsString() nonce!: string;
  @IsString() playerId!: string;
  @IsString() region!: string;
  @IsString() edgeId!: string;
  @IsInt() @Min(0) issuedAtUs!: number;
  @IsString() keyId!: string;
  @IsString() signature!: string;
}

export class AnswerRequestBody {
  @Matches(UUID, UUID_MESSAGE)
  playerId!: string;

  @Matches(REGION, REGION_MESSAGE)
  region!: string;

  @IsObject({ message: 'challenge must be the challenge object, echoed back unchanged' })
  @ValidateNested()
  @Type(() => EchoedChallenge)
  challenge!: EchoedChallenge;
}
