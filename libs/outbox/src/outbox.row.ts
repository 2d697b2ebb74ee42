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
  /** Names the claiming statement; the ack must carry it (fencing). Null when unclaimed. */
  claim_token: string | null;
  /** The dispatcher process (outbox_dispatchers.id) holding the claim. Null when unclaimed. */
  claimed_by: string | null;
  published_at: Date | null;
  dead_lettered_at: Date | null;
  created_at: Date;
  /** W3C trace context of the transaction that wrote the row; null when it was not traced. */
  traceparent: string | null;
}

export const OUTBOX_COLUMN_NAMES = [
  'id',
  'event',
  'aggregate_type',
  'aggregate_id',
  'revision',
  'occurred_at',
  'player_ids',
  'payload',
  'status',
  'attempts',
  'last_error',
  'next_attempt_at',
  'claimed_at',
  'claim_token',
  'claimed_by',
  'published_at',
  'dead_lettered_at',
  'created_at',
  'traceparent',
] as const satisfies readonly (keyof OutboxRow)[];

export const OUTBOX_COLUMNS = OUTBOX_COLUMN_NAMES.join(', ');
