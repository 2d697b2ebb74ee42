export * from './ticket.store';
export * from './candidate.projection';
export * from './tickets.module';
export * from './ticket-explanation';
export * from './tickets.retention';
export * from './queue-wait.estimates';
export * from './queue-controls.store';
export * from './tickets.reconciliation';
