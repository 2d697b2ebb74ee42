export * from './match.store';
export * from './matches.module';
export * from './match-lifecycle.service';
