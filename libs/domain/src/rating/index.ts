export * from './skill-rating';
export * from './match-rating';
export * from './rating.events';
