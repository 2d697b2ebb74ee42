import { applyDecorators } from '@nestjs/common';
import { IsISO8601, Matches } from 'class-validator';

/** A bare local time would mean whatever zone the server runs in: require Z or an offset (or a plain date, UTC). */
const INSTANT_WITH_ZONE = /^\d{4}-\d{2}-\d{2}$|(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;
const ZONE_MESSAGE = '$property must carry a time zone (Z or +hh:mm), or be a plain date';

/** An ISO 8601 instant with its zone (or a plain date, read as UTC); otherwise a 400 naming it. */
export function IsInstantInput(): PropertyDecorator {
  return applyDecorators(
    IsISO8601({ strict: true }),
    Matches(INSTANT_WITH_ZONE, { message: ZONE_MESSAGE }),
  );
}
