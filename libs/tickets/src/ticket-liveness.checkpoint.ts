import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TicketLiveness } from './ticket-liveness';
import { TicketStore } from './ticket.store';

/** Tickets one checkpoint statement writes at most (one SSCAN page, one UPDATE). */
const CHECKPOINT_CHUNK = 2_000;

export interface LivenessCheckpointReport {
  /** Tickets beaten through Redis since the previous checkpoint. */
  readonly beaten: number;
  /** Rows whose last_heartbeat_at moved forward. */
  readonly written: number;
  /** Beaten tickets whose candidates misstated their rows (a lost projection write): re-projected. */
  readonly repaired: number;
}

/**
 * The durable side of TicketLiveness: takes the tickets beaten through Redis since the previous
 * checkpoint and writes their last beats into PostgreSQL, a chunk per statement, then forgets
 * them. A crash before the end leaves them taken: the next checkpoint writes them again (a beat
 * never moves a row back, so twice is harmless). A candidate whose version is not its row's (a
 * projection write that never reached Redis: a ticket that left the queue still answering its
 * heartbeats, a stale RTT) is re-projected from its row. Heartbeats through Redis no longer carry
 * the row into the projection, so this is what keeps a stale candidate from living on: it lasts
 * one checkpoint at most.
 */
@Injectable()
export class TicketLivenessCheckpoint {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tickets: TicketStore,
    private readonly liveness: TicketLiveness,
  ) {}

  async checkpoint(): Promise<LivenessCheckpointReport> {
    const beaten = await this.liveness.takeBeaten();
    let written = 0;
    let repaired = 0;
    let cursor = '0';
    do {
      const [next, ids] = await this.liveness.scanTaken(cursor, CHECKPOINT_CHUNK);
      cursor = next;
      if (ids.length === 0) continue;
      const beats = await this.liveness.recordedBeats(ids);
      const result = await this.tickets.checkpointHeartbeats(this.dataSource.manager, beats);
      written += result.written;
      if (result.stale.length > 0) {
        await this.tickets.reproject(this.dataSource.manager, result.stale);
        repaired += result.stale.length;
      }
    } while (cursor !== '0');
    await this.liveness.releaseTaken();
    return { beaten, written, repaired };
  }
}
