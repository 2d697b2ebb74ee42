import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** One operator action, as the audit trail records it. */
export interface AuditEntry {
  /** Who did it: an operator name (admin API) or the `--actor` of a CLI run. */
  actor: string;
  /** What was done, dotted and stable, e.g. `outbox.dead_letter.replayed`. */
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null;
  /** Everything needed to understand (or undo) the action later; a JSON object. */
  details?: Record<string, unknown>;
}

/**
 * The audit module's only door to `audit_log`. Writes go through the caller's transaction, so an
 * action and its audit row commit (or roll back) together: there is never an unaudited change,
 * and never an audit row for a change that did not happen.
 */
@Injectable()
export class AuditWriter {
  async record(manager: EntityManager, entry: AuditEntry): Promise<string> {
    const [id] = await this.recordMany(manager, [entry]);
    if (id === undefined) throw new Error('audit_log insert returned no id');
    return id;
  }

  /** Many entries in one statement (a bulk action audits each row it touched). Returns their ids in order. */
  async recordMany(manager: EntityManager, entries: readonly AuditEntry[]): Promise<string[]> {
    if (entries.length === 0) return [];
    entries.forEach(assertWellFormed);
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO audit_log (actor, action, target_type, target_id, reason, details)
       SELECT actor, action, target_type, target_id, reason, details::jsonb
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                WITH ORDINALITY AS entry (actor, action, target_type, target_id, reason, details, position)
        ORDER BY position
       RETURNING id`,
      [
        entries.map((entry) => entry.actor),
        entries.map((entry) => entry.action),
        entries.map((entry) => entry.targetType),
        entries.map((entry) => entry.targetId),
        entries.map((entry) => entry.reason ?? null),
        entries.map((entry) => JSON.stringify(entry.details ?? {})),
      ],
    );
    return rows.map((row) => row.id);
  }
}

/** A programming error, not bad input: callers validate what operators type before auditing it. */
function assertWellFormed(entry: AuditEntry): void {
  for (const field of ['actor', 'action', 'targetType', 'targetId'] as const) {
    if (typeof entry[field] !== 'string' || entry[field].trim() === '') {
      throw new Error(`audit entry needs a non-empty ${field}`);
    }
  }
  const details: unknown = entry.details ?? {};
  if (typeof details !== 'object' || details === null || Array.isArray(details)) {
    throw new Error('audit entry details must be a JSON object');
  }
}
