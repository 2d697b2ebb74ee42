import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import type { CreateSessionRequest } from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';

export class CreateSessionBody implements CreateSessionRequest {
  @ApiPropertyOptional({ description: 'Identity provider; "guest" when absent', example: 'guest' })
  @IsOptionalNonNull()
  @Matches(/^[a-z0-9][a-z0-9:_.-]{0,63}$/, {
    message: 'provider must be a provider name such as "guest" or "jwt"',
  })
  provider?: string;

  @ApiPropertyOptional({
    description:
      'Guest: the device secret from an earlier session (absent: a new guest). Other providers: their credential (e.g. a JWT)',
  })
  @IsOptionalNonNull()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  credential?: string;
}
