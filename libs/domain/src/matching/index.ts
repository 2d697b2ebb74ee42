export * from './attribute-rules';
export * from './match-formation';
export * from './mode-rules';
export * from './team-balance';
export * from './unmatched-reason';
export { withinRatingWindow } from './region-bucket';
export * from './party-teams';
export * from './party-integrity';
export * from './backfill-selection';
