import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

const PROBE_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    // Answered or not: an answer is accepted only before expires_at, so after it nothing reads the row.
    name: 'probe_challenges',
    table: 'probe_challenges',
    alias: 'c',
    window: 'RETENTION_PROBE_CHALLENGES_SECONDS',
    index: 'probe_challenges_expires_at_idx',
    age: 'expires_at',
  },
  {
    // The id refuses a replay only while a measurement that old would still be fresh
    // (PROBE_MEASUREMENT_MAX_AGE_MS); after the window nothing reads the row.
    name: 'probe_measurements',
    table: 'probe_measurements',
    alias: 'm',
    window: 'RETENTION_PROBE_MEASUREMENTS_SECONDS',
    index: 'probe_measurements_recorded_at_idx',
    age: 'recorded_at',
  },
];

@RetainsRows()
@Injectable()
export class ProbeRetention extends RetentionOwner {
  readonly policies = PROBE_RETENTION_POLICIES;
}

/** Probe challenges' and measurements' retention, for the maintenance app to discover. */
@Module({ providers: [ProbeRetention] })
export class ProbeRetentionModule {}
