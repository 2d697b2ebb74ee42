export * from './skill-rating';
export * from './match-rating';
