import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsString,
  isUUID,
  Matches,
  Max,
  Min,
  ValidateBy,
} from 'class-validator';
import type {
  CreateLobbyRequest,
  JoinLobbyRequest,
  KickLobbyMemberRequest,
  SetLobbyTeamsRequest,
} from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';
import { IsUuidInput } from '../http/uuid-input';
import { LOBBY_INVITE_CODE_PATTERN } from './lobby.service';

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export class CreateLobbyBody implements CreateLobbyRequest {
  @ApiProperty({ description: 'A configured queue mode (GET /v1/queue/options)', example: 'duel' })
  @IsString()
  @Matches(NAME, { message: 'mode must be a mode name (lowercase letters, digits, "-", "_")' })
  mode!: string;

  @ApiPropertyOptional({
    description: "Most members: 2 up to the mode's players (team size x team count), the default",
    example: 4,
  })
  @IsOptionalNonNull()
  @IsInt({ message: 'size must be an integer' })
  @Min(2, { message: 'size must be at least 2' })
  @Max(1_000, { message: 'size must be at most the mode allows' })
  size?: number;

  @ApiPropertyOptional({
    description:
      'An offered region (GET /v1/queue/options) to place the match in; absent: the region with the lowest worst member RTT',
    example: 'eu-west',
  })
  @IsOptionalNonNull()
  @IsString()
  @Matches(NAME, { message: 'region must be a region name' })
  region?: string;

  @ApiPropertyOptional({
    description: "Whether the match's result rates its players; default false (unranked)",
  })
  @IsOptionalNonNull()
  @IsBoolean({ message: 'ranked must be true or false' })
  ranked?: boolean;
}

export class JoinLobbyBody implements JoinLobbyRequest {
  @ApiProperty({
    description: 'The invite code the owner got from POST /v1/lobbies',
    example: 'mpl_3q2-7wEVR_BtkS1W9z-ZfA',
  })
  @IsString()
  @Matches(LOBBY_INVITE_CODE_PATTERN, {
    message: 'inviteCode must be a lobby invite code (mpl_...)',
  })
  inviteCode!: string;
}

export class KickLobbyMemberBody implements KickLobbyMemberRequest {
  @ApiProperty({ description: 'The member to remove', format: 'uuid' })
  @IsUuidInput({ message: 'playerId must be a player id (uuid)' })
  playerId!: string;
}

export class SetLobbyTeamsBody implements SetLobbyTeamsRequest {
  @ApiProperty({
    description: "Team i (0-based) holds teams[i]'s player ids; every member named once",
    type: 'array',
    items: { type: 'array', items: { type: 'string', format: 'uuid' } },
  })
  @IsArray({ message: 'teams must be an array of arrays of player ids' })
  @ArrayMaxSize(64, { message: 'teams must have at most 64 teams' })
  @ValidateBy(
    {
      name: 'teamsOfPlayerIds',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.every(
            (team) =>
              Array.isArray(team) &&
              team.length <= 1_000 &&
              team.every((id) => typeof id === 'string' && isUUID(id, 'all')),
          ),
      },
    },
    { message: 'each team must be an array of player ids (uuid)' },
  )
  @Transform(({ value }: { value: unknown }) =>
    Array.isArray(value)
      ? value.map((team: unknown) =>
          Array.isArray(team)
            ? team.map((id: unknown) => (typeof id === 'string' ? id.toLowerCase() : id))
            : team,
        )
      : value,
  )
  teams!: string[][];
}
