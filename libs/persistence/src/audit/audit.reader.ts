import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** One row of the audit trail as operators read it back. */
export interface AuditRecord {
  id: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  reason: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

export interface AuditQuery {
  targetType?: string;
  targetId?: string;
  /** Only entries older than this id (the previous page's last id). */
  beforeId?: string;
  limit: number;
}

/** Reads `audit_log` back for the operator console: newest first, keyset-paginated on id. */
@Injectable()
export class AuditReader {
  constructor(private readonly dataSource: DataSource) {}

  async recent(query: AuditQuery): Promise<AuditRecord[]> {
    const params: unknown[] = [];
    const conditions: string[] = [];
    const add = (sql: (placeholder: string) => string, value: unknown) => {
      params.push(value);
      conditions.push(sql(`$${params.length}`));
    };
    if (query.targetType !== undefined) add((p) => `target_type = ${p}`, query.targetType);
    if (query.targetId !== undefined) add((p) => `target_id = ${p}`, query.targetId);
    if (query.beforeId !== undefined) add((p) => `id < ${p}::bigint`, query.beforeId);
    params.push(query.limit);
    const rows = await this.dataSource.query<
      {
        id: string;
        actor: string;
        action: string;
        target_type: string;
        target_id: string;
        reason: string | null;
        details: Record<string, unknown>;
        created_at: Date;
      }[]
    >(
      `SELECT id, actor, action, target_type, target_id, reason, details, created_at
         FROM audit_log ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => ({
      id: row.id,
      actor: row.actor,
      action: row.action,
      targetType: row.target_type,
      targetId: row.target_id,
      reason: row.reason,
      details: row.details,
      createdAt: row.created_at,
    }));
  }
}
