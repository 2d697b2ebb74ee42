import { Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store';

/** Owns `idempotency_keys` (the maintenance app purges it past its retention window). */
@Module({ providers: [IdempotencyStore], exports: [IdempotencyStore] })
export class IdempotencyModule {}
