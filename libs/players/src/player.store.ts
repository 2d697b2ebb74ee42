import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { recordOffence, type OffencePolicy } from '@matchplane/domain';
import type { UnitOfWork } from '@matchplane/persistence';

export interface QueueEntryProfile {
  readonly rating: number;
  /** The rating's uncertainty (openskill sigma), copied to the ticket for team balance. */
  readonly ratingSigma: number;
  /** Set while a no-show penalty is in force. */
  readonly cooldownUntil?: Date;
  /** Set while requeue priority holds: the enqueue time the player's next ticket keeps. */
  readonly queuedSince?: Date;
}

/** A player whose match was lost with its server: its next ticket keeps `queuedSince`. */
export interface RequeuePriority {
  readonly playerId: string;
  readonly queuedSince: Date;
}

/**
 * The offence cooldown (no-shows, ready checks, abandoned matches): `baseMs` for a first offence,
 * doubling with each offence still in force, at most `capMs`; one forgiven per `decayMs` without
 * a new one (libs/domain offence-cooldown.ts).
 */
export type NoShowPenaltyPolicy = OffencePolicy;

/** The policy the NO_SHOW_* variables describe (the API and maintenance both apply it). */
export function noShowPenaltyPolicy(config: {
  readonly NO_SHOW_COOLDOWN_BASE_SECONDS: number;
  readonly NO_SHOW_COOLDOWN_CAP_SECONDS: number;
  readonly NO_SHOW_OFFENCE_DECAY_SECONDS: number;
}): NoShowPenaltyPolicy {
  return {
    baseMs: config.NO_SHOW_COOLDOWN_BASE_SECONDS * 1000,
    capMs: config.NO_SHOW_COOLDOWN_CAP_SECONDS * 1000,
    decayMs: config.NO_SHOW_OFFENCE_DECAY_SECONDS * 1000,
  };
}

export interface NoShowPenalty {
  readonly noShowCount: number;
  readonly cooldownUntil: Date;
}

/** A player's penalty before and after an operator lifted it. */
export interface LiftedPenalty {
  /** The cooldown that was in force and is no more; undefined when none was. */
  readonly liftedCooldownUntil?: Date;
  readonly offencesBefore: number;
  readonly offencesAfter: number;
}

/** Owns `players`: identities, rating and no-show penalties. */
@Injectable()
export class PlayerStore {
  async createGuest(manager: EntityManager, deviceSecretHash: Buffer): Promise<string> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO players (device_secret_hash) VALUES ($1) RETURNING id`,
      [deviceSecretHash],
    );
    return (rows[0] as { id: string }).id;
  }

  async findByDeviceSecret(
    manager: EntityManager,
    deviceSecretHash: Buffer,
  ): Promise<string | undefined> {
    const rows = await manager.query<{ id: string }[]>(
      `SELECT id FROM players WHERE device_secret_hash = $1`,
      [deviceSecretHash],
    );
    return rows[0]?.id;
  }

  /** The player of an external identity, created on first sight. */
  async upsertExternal(manager: EntityManager, provider: string, subject: string): Promise<string> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO players (identity_provider, external_subject) VALUES ($1, $2)
       ON CONFLICT (identity_provider, external_subject) DO UPDATE SET updated_at = now()
       RETURNING id`,
      [provider, subject],
    );
    return (rows[0] as { id: string }).id;
  }

  /**
   * What ticket creation needs, with the player row locked so concurrent creates serialise.
   * FOR NO KEY UPDATE, not FOR UPDATE: the request's idempotency key (and any row referencing the
   * player) already holds FOR KEY SHARE on this row through its foreign key, which FOR UPDATE
   * conflicts with, so two concurrent creates each waited for the other: a deadlock per race.
   */
  async queueEntryProfile(
    manager: EntityManager,
    playerId: string,
  ): Promise<QueueEntryProfile | undefined> {
    const rows = await manager.query<
      {
        rating: number;
        rating_sigma: number;
        cooldown_until: Date | null;
        queued_since: Date | null;
      }[]
    >(
      `SELECT rating, rating_sigma, cooldown_until,
              CASE WHEN requeue_priority_until > now() THEN requeue_queued_since END AS queued_since
         FROM players WHERE id = $1 FOR NO KEY UPDATE`,
      [playerId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      rating: row.rating,
      ratingSigma: row.rating_sigma,
      ...(row.cooldown_until ? { cooldownUntil: row.cooldown_until } : {}),
      ...(row.queued_since ? { queuedSince: row.queued_since } : {}),
    };
  }

  /**
   * Grants requeue priority until `until` (a later grant keeps the earlier enqueue time while the
   * first still holds): the players of a match lost with its server are served ahead at their
   * next enqueue, which spends it ({@link spendRequeuePriority}).
   */
  async grantRequeuePriority(
    manager: EntityManager,
    grants: readonly RequeuePriority[],
    until: Date,
  ): Promise<void> {
    if (grants.length === 0) return;
    await manager.query(
      `UPDATE players p
          SET requeue_queued_since = CASE WHEN p.requeue_priority_until > now()
                                          THEN LEAST(p.requeue_queued_since, g.since) ELSE g.since END,
              requeue_priority_until = $3, updated_at = now()
         FROM unnest($1::uuid[], $2::timestamptz[]) AS g(player_id, since)
        WHERE p.id = g.player_id`,
      [grants.map((g) => g.playerId), grants.map((g) => g.queuedSince), until],
    );
  }

  /** The player's ticket took its priority: the next one queues at its own time. */
  async spendRequeuePriority(manager: EntityManager, playerId: string): Promise<void> {
    await manager.query(
      `UPDATE players SET requeue_queued_since = NULL, requeue_priority_until = NULL, updated_at = now()
        WHERE id = $1`,
      [playerId],
    );
  }

  /**
   * Records an offence (a no-show, a ready check declined or missed, an abandoned match) under
   * the player's row lock: `no_show_count` becomes the offences in force (decayed, plus this
   * one) and the cooldown runs `base * 2^(earlier offences in force)` (capped) from `now`, never
   * shortening one already in force. A read then a write: in `unit`'s transaction, so the lock
   * holds between them.
   */
  async penaliseNoShow(
    unit: UnitOfWork,
    playerId: string,
    now: Date,
    policy: NoShowPenaltyPolicy,
  ): Promise<NoShowPenalty | undefined> {
    const [row] = await unit.manager.query<
      { no_show_count: number; last_offence_at: Date | null; cooldown_until: Date | null }[]
    >(
      `SELECT no_show_count, last_offence_at, cooldown_until FROM players WHERE id = $1 FOR UPDATE`,
      [playerId],
    );
    if (!row) return undefined;
    const { record, cooldownUntil } = recordOffence(
      { count: row.no_show_count, ...(row.last_offence_at ? { lastAt: row.last_offence_at } : {}) },
      now,
      policy,
      row.cooldown_until ?? undefined,
    );
    await unit.manager.query(
      `UPDATE players SET no_show_count = $2, last_offence_at = $3, cooldown_until = $4, updated_at = now()
        WHERE id = $1`,
      [playerId, record.count, record.lastAt, cooldownUntil],
    );
    return { noShowCount: record.count, cooldownUntil };
  }

  /**
   * Ends the player's cooldown now (an operator's decision: a tester, a wrongly penalised player);
   * with `forgiveOffences` the offences in force go too, so the next one is a first offence again.
   * Undefined when there is no such player. In `unit`'s transaction, under the player's row lock.
   */
  async liftCooldown(
    unit: UnitOfWork,
    playerId: string,
    now: Date,
    options: { forgiveOffences: boolean },
  ): Promise<LiftedPenalty | undefined> {
    const [row] = await unit.manager.query<
      { no_show_count: number; cooldown_until: Date | null }[]
    >(`SELECT no_show_count, cooldown_until FROM players WHERE id = $1 FOR UPDATE`, [playerId]);
    if (!row) return undefined;
    const offencesAfter = options.forgiveOffences ? 0 : row.no_show_count;
    await unit.manager.query(
      `UPDATE players
          SET cooldown_until = NULL, no_show_count = $2,
              last_offence_at = CASE WHEN $3::boolean THEN NULL ELSE last_offence_at END,
              updated_at = now()
        WHERE id = $1`,
      [playerId, offencesAfter, options.forgiveOffences],
    );
    const inForce = row.cooldown_until !== null && row.cooldown_until > now;
    return {
      ...(inForce ? { liftedCooldownUntil: row.cooldown_until! } : {}),
      offencesBefore: row.no_show_count,
      offencesAfter,
    };
  }
}
