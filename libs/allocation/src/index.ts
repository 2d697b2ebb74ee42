export * from './allocation.queue';
export * from './allocation.store';
export type { DurableParticipant } from '@matchplane/matches';
export * from './roster.store';
export * from './allocation.module';
export * from './workload-credential';
export * from './static-servers';
export * from './allocation.retention';
export * from './allocation.reconciliation';
