import { Module } from '@nestjs/common';
import { LatencyStore } from './latency.store';

/** Owns `player_latencies`: written by probe answers, read when a ticket is created. */
@Module({ providers: [LatencyStore], exports: [LatencyStore] })
export class LatenciesModule {}
