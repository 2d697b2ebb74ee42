export * from './match.store';
export * from './matches.module';
export * from './match-lifecycle.service';
export * from './matches.retention';
export * from './durable-participants';
export * from './matches.reconciliation';
export * from './backfill.store';
export * from './server-loss.reconciler';
