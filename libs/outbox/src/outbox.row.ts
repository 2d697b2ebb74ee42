/** An outbox row as the pg driver returns it (int8 columns arrive as decimal strings). */
export interface OutboxRow {
  id: string;
  event: string;
  aggregate_type: string;
  aggregate_id: string;
  revision: string;
  occurred_at: Date;
  player_ids: string[];
  payload: Record<string, unknown>;
  status: 'pending' | 'published' | 'dead';
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  claimed_at: Date | null;
  published_at: Date | null;
  dead_lettered_at: Date | null;
  created_at: Date;
}

export const OUTBOX_COLUMNS = `id, event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
  status, attempts, last_error, next_attempt_at, claimed_at, published_at, dead_lettered_at, created_at`;
