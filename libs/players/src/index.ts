export * from './player-identity.verifier';
export * from './guest-identity.verifier';
export * from './player.store';
export * from './session.store';
export * from './session.service';
export * from './session-token';
export * from './players.module';
export * from './jwt-identity.verifier';
