import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RuleVariables } from './rule-variables';

export type RuleSetStatus = 'draft' | 'active' | 'retired';

/** One version of the rules: what it sets over each app's environment, and its life. */
export interface StoredRuleSet {
  readonly version: number;
  /** The rule variables it sets, laid over each app's own (version 1 sets none: the environment). */
  readonly rules: RuleVariables;
  readonly status: RuleSetStatus;
  readonly reason: string;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly activatedAt?: Date;
  readonly retiredAt?: Date;
}

interface RuleSetRow {
  version: number;
  body: RuleVariables;
  status: RuleSetStatus;
  reason: string;
  created_by: string;
  created_at: Date;
  activated_at: Date | null;
  retired_at: Date | null;
}

const COLUMNS = `version, body, status, reason, created_by, created_at, activated_at, retired_at`;

function toRuleSet(row: RuleSetRow): StoredRuleSet {
  return {
    version: row.version,
    rules: row.body,
    status: row.status,
    reason: row.reason,
    createdBy: row.created_by,
    createdAt: row.created_at,
    ...(row.activated_at ? { activatedAt: row.activated_at } : {}),
    ...(row.retired_at ? { retiredAt: row.retired_at } : {}),
  };
}

/**
 * The only door to `rule_sets`: versions of the rules, at most one active (a partial unique
 * index). Changes take the table's lock first, so versions are numbered and activated one at a
 * time by any number of API replicas and CLI runs.
 */
@Injectable()
export class RuleSetStore {
  /**
   * Version 1, the environment (it sets nothing over each app's variables), active: written by
   * whichever app starts first on an empty table; a no-op afterwards.
   */
  async seedEnvironment(manager: EntityManager): Promise<void> {
    await manager.query(
      `INSERT INTO rule_sets (version, body, status, reason, created_by, activated_at)
       SELECT 1, '{}'::jsonb, 'active', 'the environment variables each app was started with', 'environment', now()
        WHERE NOT EXISTS (SELECT 1 FROM rule_sets)
       ON CONFLICT DO NOTHING`,
    );
  }

  async active(manager: EntityManager): Promise<StoredRuleSet | undefined> {
    const rows = await manager.query<RuleSetRow[]>(
      `SELECT ${COLUMNS} FROM rule_sets WHERE status = 'active'`,
    );
    return rows[0] && toRuleSet(rows[0]);
  }

  /** The newest versions first. */
  async list(manager: EntityManager, limit = 100): Promise<StoredRuleSet[]> {
    const rows = await manager.query<RuleSetRow[]>(
      `SELECT ${COLUMNS} FROM rule_sets ORDER BY version DESC LIMIT $1`,
      [limit],
    );
    return rows.map(toRuleSet);
  }

  /** A new draft, numbered after the newest version. */
  async create(
    manager: EntityManager,
    draft: { rules: RuleVariables; reason: string; createdBy: string },
  ): Promise<StoredRuleSet> {
    await this.lock(manager);
    const rows = await manager.query<RuleSetRow[]>(
      `INSERT INTO rule_sets (version, body, status, reason, created_by)
       SELECT coalesce(max(version), 0) + 1, $1::jsonb, 'draft', $2, $3 FROM rule_sets
       RETURNING ${COLUMNS}`,
      [JSON.stringify(draft.rules), draft.reason, draft.createdBy],
    );
    return toRuleSet(rows[0] as RuleSetRow);
  }

  /** A version by its number, read under the table's lock (for a change that follows). */
  async lockedVersion(manager: EntityManager, version: number): Promise<StoredRuleSet | undefined> {
    await this.lock(manager);
    const rows = await manager.query<RuleSetRow[]>(
      `SELECT ${COLUMNS} FROM rule_sets WHERE version = $1`,
      [version],
    );
    return rows[0] && toRuleSet(rows[0]);
  }

  /** The version retired last: the one active before the active one (under the table's lock). */
  async lockedPrevious(manager: EntityManager): Promise<StoredRuleSet | undefined> {
    await this.lock(manager);
    const rows = await manager.query<RuleSetRow[]>(
      `SELECT ${COLUMNS} FROM rule_sets WHERE status = 'retired'
        ORDER BY retired_at DESC, version DESC LIMIT 1`,
    );
    return rows[0] && toRuleSet(rows[0]);
  }

  /**
   * Makes `version` the active one, retiring the one before; the caller holds the lock (one of the
   * `locked` reads). Returns the version it retired.
   */
  async activate(manager: EntityManager, version: number): Promise<number | undefined> {
    const retired = await manager.query<{ version: number }[]>(
      `UPDATE rule_sets SET status = 'retired', retired_at = now()
        WHERE status = 'active' AND version <> $1
       RETURNING version`,
      [version],
    );
    await manager.query(
      `UPDATE rule_sets SET status = 'active', activated_at = now(), retired_at = NULL
        WHERE version = $1`,
      [version],
    );
    return retired[0]?.version;
  }

  /** One change at a time; readers (every app's poll) are not blocked. */
  private async lock(manager: EntityManager): Promise<void> {
    await manager.query(`LOCK TABLE rule_sets IN SHARE ROW EXCLUSIVE MODE`);
  }
}
