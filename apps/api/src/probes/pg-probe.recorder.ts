import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiConfig } from '../api.config';
import { runInTransaction } from '@matchplane/persistence';
import { secretHash } from '@matchplane/players';
import { TicketStore } from '@matchplane/tickets';
import { LatencyStore, ProbeChallengeStore } from '@matchplane/latency';
import {
  ProbeRecorder,
  ProbeRefusedError,
  type IssuedChallenge,
  type RecordedProbe,
} from './probe.recorder';

/**
 * The API-hosted probe (a deployment without regional edges), over libs/latency's
 * ProbeChallengeStore: any API replica may receive the answer. The RTT is this server's receive time minus its issue time (replicas' clocks must be
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
    private readonly challenges: ProbeChallengeStore,
    private readonly tickets: TicketStore,
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
    await this.challenges.insert(this.dataSource.manager, {
      id: challengeId,
      playerId,
      region,
      nonceHash: secretHash(nonce),
      issuedAt: provisional,
      expiresAt: this.expiry(provisional),
    });
    // Stamped after the write, as the answer leaves: the INSERT's round trip and any wait for a
    // connection are not the player's RTT. The correction is queued on the pool before the
    // response is written, so it reaches PostgreSQL before any answer can (FIFO pool, and the
    // answer's FOR UPDATE waits for it); if it failed, the sample is only too long, never short.
    // It applies only to the row as inserted, never over a later change.
    const issuedAt = new Date(Math.max(Date.now(), provisional.getTime()));
    const expiresAt = this.expiry(issuedAt);
    const settled = this.challenges
      .restamp(this.dataSource.manager, challengeId, { provisional, issuedAt, expiresAt })
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
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const challenge = await this.challenges.lock(manager, answer.challengeId);
      if (!challenge)
        throw new ProbeRefusedError('NOT_FOUND', `No probe challenge ${answer.challengeId}`);
      if (challenge.playerId !== playerId) {
        throw new ProbeRefusedError('WRONG_PLAYER', 'This challenge was issued to another player');
      }
      if (challenge.region !== region) {
        throw new ProbeRefusedError(
          'WRONG_REGION',
          `This challenge was issued for ${challenge.region}, not ${region}`,
        );
      }
      if (challenge.answeredAt !== null) {
        throw new ProbeRefusedError(
          'ALREADY_ANSWERED',
          'This challenge was already answered; request a new one',
        );
      }
      if (!timingSafeEqual(secretHash(answer.nonce), challenge.nonceHash)) {
        throw new ProbeRefusedError('NONCE_MISMATCH', 'The nonce does not match the challenge');
      }
      if (receivedAt.getTime() > challenge.expiresAt.getTime()) {
        throw new ProbeRefusedError(
          'EXPIRED',
          'The challenge expired before it was answered; request a new one',
        );
      }
      // A receive stamped before the issue (clock step between replicas) is no measurement: clamp at 0.
      const rttMs = Math.max(0, receivedAt.getTime() - challenge.issuedAt.getTime());
      await this.challenges.markAnswered(manager, answer.challengeId, {
        answeredAt: receivedAt,
        rttMs,
      });
      const { samplesMs, estimateMs } = await this.latencies.record(unit, {
        playerId,
        region,
        sampleMs: rttMs,
        keep: this.keep,
        measuredAt: receivedAt,
      });
      // A searching ticket now has this RTT; the store refreshes its candidate once this commits.
      await this.tickets.applyLatency(unit, playerId, region, estimateMs);
      return { rttMs, estimateMs, samplesMs };
    });
  }
}
