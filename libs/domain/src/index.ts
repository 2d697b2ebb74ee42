export * from './candidate';
export * from './domain.error';
export * from './match.machine';
export * from './ticket.machine';
