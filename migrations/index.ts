import { InitialSchema1764000000000 } from './1764000000000-initial-schema';
import { RetentionIndexes1764100000000 } from './1764100000000-retention-indexes';
import { AllocationHandoff1764300000000 } from './1764300000000-allocation-handoff';
import { ParticipantTicketHistory1764350000000 } from './1764350000000-participant-ticket-history';
import { OutboxClaimOwners1764450000000 } from './1764450000000-outbox-claim-owners';
import { TicketEndReason1764460000000 } from './1764460000000-ticket-end-reason';
import { AuditLogTargetIndex1764520000000 } from './1764520000000-audit-log-target-index';
import { TraceContext1764530000000 } from './1764530000000-trace-context';
import { PlayerSkill1764600000000 } from './1764600000000-player-skill';
import { TicketAttributes1764610000000 } from './1764610000000-ticket-attributes';
import { Parties1764620000000 } from './1764620000000-parties';
import { AllocationRegion1764630000000 } from './1764630000000-allocation-region';
import { Backfill1764640000000 } from './1764640000000-backfill';
import { ServerHeartbeat1764650000000 } from './1764650000000-server-heartbeat';
import { MatchRatingChanges1764660000000 } from './1764660000000-match-rating-changes';
import { QueueControls1764670000000 } from './1764670000000-queue-controls';
import { ProbeMeasurements1764680000000 } from './1764680000000-probe-measurements';
import { ReadyCheck1764690000000 } from './1764690000000-ready-check';
import { ReconnectAndLeavers1764700000000 } from './1764700000000-reconnect-and-leavers';
import { OwnedReadModels1764710000000 } from './1764710000000-owned-read-models';
import { PlayerBlocks1764720000000 } from './1764720000000-player-blocks';
import { Lobbies1764725000000 } from './1764725000000-lobbies';
import { BackfillOpenRoles1764735000000 } from './1764735000000-backfill-open-roles';
import { RuleSets1764745000000 } from './1764745000000-rule-sets';
import { PlayerAvoids1764755000000 } from './1764755000000-player-avoids';

/**
 * Every migration, oldest first. Append new ones here; nothing else lists or counts them
 * (tests use `allMigrations.length`).
 */
export const allMigrations = [
  InitialSchema1764000000000,
  RetentionIndexes1764100000000,
  AllocationHandoff1764300000000,
  ParticipantTicketHistory1764350000000,
  OutboxClaimOwners1764450000000,
  TicketEndReason1764460000000,
  AuditLogTargetIndex1764520000000,
  TraceContext1764530000000,
  PlayerSkill1764600000000,
  TicketAttributes1764610000000,
  Parties1764620000000,
  AllocationRegion1764630000000,
  Backfill1764640000000,
  ServerHeartbeat1764650000000,
  MatchRatingChanges1764660000000,
  QueueControls1764670000000,
  ProbeMeasurements1764680000000,
  ReadyCheck1764690000000,
  ReconnectAndLeavers1764700000000,
  OwnedReadModels1764710000000,
  PlayerBlocks1764720000000,
  Lobbies1764725000000,
  BackfillOpenRoles1764735000000,
  RuleSets1764745000000,
  PlayerAvoids1764755000000,
];
