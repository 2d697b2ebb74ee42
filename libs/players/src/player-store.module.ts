import { Module } from '@nestjs/common';
import { PlayerStore } from './player.store';

/**
 * PlayerStore alone, for modules that penalise players without serving sessions (MatchLifecycle
 * applies the no-show cooldown in the API and the maintenance app alike).
 */
@Module({ providers: [PlayerStore], exports: [PlayerStore] })
export class PlayerStoreModule {}
