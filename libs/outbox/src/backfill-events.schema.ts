import { IsArray, IsIn, IsInt, Min, ValidateBy } from 'class-validator';
import {
  BACKFILL_STATES,
  BackfillReason,
  backfillReasonsFor,
  canTransitionBackfill,
  isUuid,
  type BackfillState,
  type BackfillStateChangedPayload,
} from '@matchplane/domain';
import {
  IfPresent,
  IsCanonicalUuid,
  IsIsoInstant,
  IsLabel,
  NullOrIn,
  reasonProblems,
  transitionProblems,
  type EnvelopeProblem,
} from './event-schema.parts';

/** `backfill.state_changed`: a running match's request for players entered `to`. */
export class BackfillStateChangedSchema {
  @IsCanonicalUuid()
  requestId!: string;

  @IsCanonicalUuid()
  matchId!: string;

  @IsLabel()
  mode!: string;

  @IsInt()
  @Min(0)
  team!: number;

  @IsInt()
  @Min(1)
  slots!: number;

  @NullOrIn(BACKFILL_STATES)
  from!: BackfillState | null;

  @IsIn(BACKFILL_STATES)
  to!: BackfillState;

  @IfPresent()
  @IsIn(Object.values(BackfillReason))
  reason?: BackfillReason;

  @IsArray()
  @ValidateBy(
    {
      name: 'isCanonicalUuid',
      validator: { validate: (value: unknown) => isUuid(value) },
    },
    { each: true, message: 'each must be a canonical lowercase uuid' },
  )
  playerIds!: string[];

  @IfPresent()
  @IsInt()
  @Min(2)
  rosterRevision?: number;

  @IsIsoInstant()
  expiresAt!: string;
}

export function backfillRules(payload: BackfillStateChangedPayload): EnvelopeProblem[] {
  const { from, to, reason } = payload;
  const problems: EnvelopeProblem[] = [];
  const legal = from === null ? to === 'OPEN' : canTransitionBackfill(from, to);
  problems.push(...transitionProblems('backfill', from, to, legal));
  problems.push(...reasonProblems(backfillReasonsFor(to), reason, `${to}`));
  const filled = to !== 'OPEN' && to !== 'EXPIRED' && (from !== 'OPEN' || to !== 'CANCELLED');
  if (filled && payload.playerIds.length !== payload.slots) {
    problems.push({
      field: 'payload.playerIds',
      message: `a filled request names its ${payload.slots} players`,
    });
  }
  return problems;
}
