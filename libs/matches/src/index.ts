export * from './match.store';
export * from './matches.module';
