export * from './ticket.store';
export * from './candidate.projection';
export * from './tickets.module';
