import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiConfig } from '../api.config';
import { runInTransaction } from '@matchplane/persistence';
import { secretHash } from '@matchplane/players';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { LatencyStore } from './latency.store';
import {
  ProbeRecorder,
  ProbeRefusedError,
  type IssuedChallenge,
  type RecordedProbe,
} from './probe.recorder';

interface ChallengeRow {
  player_id: string;
  region: string;
  nonce_hash: Buffer;
  issued_at: Date;
  expires_at: Date;
  answered_at: Date | null;
}

/**
 * Owns `probe_challenges`. Challenges live in PostgreSQL so that any API replica may receive the
 * answer. The RTT is this server's receive time minus its issue time (replicas' clocks must be
 * NTP-synchronised); nothing the client reports about latency is read.
 */
@Injectable()
export class PgProbeRecorder extends ProbeRecorder {
  private readonly ttlMs: number;
  private readonly keep: number;
  private readonly logger = new Logger(PgProbeRecorder.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly latencies: LatencyStore,
    private readonly tickets: TicketStore,
    private readonly projection: CandidateProjection,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    super();
    this.ttlMs = config.PROBE_CHALLENGE_TTL_MS;
    this.keep = config.PROBE_SAMPLES_KEPT;
  }

  async issue(playerId: string, region: string, now: Date): Promise<IssuedChallenge> {
    const nonce = randomBytes(16).toString('base64url');
    const challengeId = randomUUID();
    // Issue and receive times are both this API's clock (receivedAt is stamped at request arrival).
    const provisional = new Date(Math.max(now.getTime(), Date.now()));
    await this.dataSource.query(
      `INSERT INTO probe_challenges (id, player_id, region, nonce_hash, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [challengeId, playerId, region, secretHash(nonce), provisional, this.expiry(provisional)],
    );
    // Stamped after the write, as the answer leaves: the INSERT's round trip and any wait for a
    // connection are not the player's RTT. The correction is queued on the pool before the
    // response is written, so it reaches PostgreSQL before any answer can (FIFO pool, and the
    // answer's FOR UPDATE waits for it); if it failed, the sample is only too long, never short.
    // It applies only to the row as inserted, never over a later change.
    const issuedAt = new Date(Math.max(Date.now(), provisional.getTime()));
    const expiresAt = this.expiry(issuedAt);
    const settled = this.dataSource
      .query(
        `UPDATE probe_challenges SET issued_at = $2, expires_at = $3
          WHERE id = $1 AND answered_at IS NULL AND issued_at = $4`,
        [challengeId, issuedAt, expiresAt, provisional],
      )
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn(`probe challenge issue time not corrected: ${String(error)}`),
      );
    return { challengeId, nonce, issuedAt, expiresAt, settled };
  }

  private expiry(issuedAt: Date): Date {
    return new Date(issuedAt.getTime() + this.ttlMs);
  }

  answer(
    playerId: string,
    region: string,
    answer: { challengeId: string; nonce: string },
    receivedAt: Date,
  ): Promise<RecordedProbe> {
    return runInTransaction(this.dataSource, async (manager) => {
      const rows = await manager.query<ChallengeRow[]>(
        `SELECT player_id, region, nonce_hash, issued_at, expires_at, answered_at
           FROM probe_challenges WHERE id = $1 FOR UPDATE`,
        [answer.challengeId],
      );
      const challenge = rows[0];
      if (!challenge)
        throw new ProbeRefusedError('NOT_FOUND', `No probe challenge ${answer.challengeId}`);
      if (challenge.player_id !== playerId) {
        throw new ProbeRefusedError('WRONG_PLAYER', 'This challenge was issued to another player');
      }
      if (challenge.region !== region) {
        throw new ProbeRefusedError(
          'WRONG_REGION',
          `This challenge was issued for ${challenge.region}, not ${region}`,
        );
      }
      if (challenge.answered_at !== null) {
        throw new ProbeRefusedError(
          'ALREADY_ANSWERED',
          'This challenge was already answered; request a new one',
        );
      }
      if (!timingSafeEqual(secretHash(answer.nonce), challenge.nonce_hash)) {
        throw new ProbeRefusedError('NONCE_MISMATCH', 'The nonce does not match the challenge');
      }
      if (receivedAt.getTime() > challenge.expires_at.getTime()) {
        throw new ProbeRefusedError(
          'EXPIRED',
          'The challenge expired before it was answered; request a new one',
        );
      }
      // A receive stamped before the issue (clock step between replicas) is no measurement: clamp at 0.
      const rttMs = Math.max(0, receivedAt.getTime() - challenge.issued_at.getTime());
      await manager.query(
        `UPDATE probe_challenges SET answered_at = $2, rtt_ms = $3 WHERE id = $1`,
        [answer.challengeId, receivedAt, rttMs],
      );
      const { samplesMs, estimateMs } = await this.latencies.record(manager, {
        playerId,
        region,
        sampleMs: rttMs,
        keep: this.keep,
        measuredAt: receivedAt,
      });
      const ticket = await this.tickets.applyLatency(manager, playerId, region, estimateMs);
      // A searching ticket now has this RTT: the matcher's candidate follows once this commits.
      if (ticket) await this.projection.refreshAfterCommit(manager, ticket);
      return { rttMs, estimateMs, samplesMs };
    });
  }
}
