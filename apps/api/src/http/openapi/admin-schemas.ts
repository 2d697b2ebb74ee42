import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { openObject } from './schema-builders';

/**
 * The operator routes' answers (apps/api/src/admin), merged into CONTRACT_SCHEMAS: open objects,
 * since the operator tools read them by name rather than through libs/contracts.
 */
export const ADMIN_SCHEMAS: Record<string, SchemaObject> = {
  DeadLetterPage: openObject('A page of dead letters: `items` and `nextCursor` (libs/outbox)'),
  DeadLetterDetail: openObject('One dead letter with its payload and delivery history'),
  BulkReplayResult: openObject('How many dead letters a bulk replay put back in the outbox'),
  ReplayedDeadLetter: openObject('The dead letter put back in the outbox'),
  DiscardedDeadLetter: openObject('The dead letter discarded'),
  OutboxStats: openObject('Pending rows, dead letters and blocked aggregates of the outbox'),
  PlayerRatingResponse: openObject('A player rating: mu, sigma, rating, revision, updatedAt'),
  ImportRatingsResponse: openObject('How many ratings were imported, and each one'),
  CancelledMatch: openObject('The match cancelled by the operator, and its released tickets'),
  ReleasedTickets: openObject("The player's tickets released by the operator"),
  LiftedCooldown: openObject(
    'The cooldown lifted (liftedCooldownUntil, null when none was in force) and the offences before and after',
  ),
  QueueControlView: openObject(
    'One queue control: scope (mode or region), name, state, who and why',
  ),
  QueueControlList: openObject('`controls`: every queue control in force'),
  QueueArrivalPage: openObject(
    "Queue arrivals oldest first (`arrivals`, each a simulator capture line with the player's `blockedPlayerIds` and `avoidedPlayerIds` when it has any) and `nextCursor`",
  ),
  RuleSetView: openObject(
    "A rule set version: version, status (draft, active, retired), rules (the variables it sets over each app's environment), reason, createdBy, createdAt, activatedAt, retiredAt; with dryRun=true the check instead: dryRun, valid, problems (field, problem), rules",
  ),
  RuleSetList: openObject('`ruleSets`: every version, newest first; `activeVersion`'),
};
