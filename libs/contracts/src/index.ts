// Wire types only: what clients (libs/sdk) and servers both speak. Nothing here may import a
// framework (test/unit/wire-imports.spec.ts); server-side helpers live in libs/routing and
// libs/errors.
export * from './error-codes';
export * from './join-protocol';
export * from './notifications';
export * from './notification-protocol';
export * from './routes';
export * from './player-api';
export * from './match-history';
export * from './server-api';
export * from './ready-check';
export * from './server-presence';
