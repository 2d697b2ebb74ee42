/**
 * Which module owns each table: the one place that says so (test/unit/table-ownership.spec.ts
 * reads it, docs/ARCHITECTURE.md "Table ownership" explains it). A module is a folder; every SQL
 * statement that names a table lives under its owner's folder, and other modules call the owner's
 * store. A statement that must read another owner's rows in its own snapshot reads a view that
 * owner's migration creates and {@link READ_MODELS} lists (docs/decisions/2026-12-06-owned-read-models.md).
 */
export const TABLE_OWNERS = {
  players: 'libs/players',
  sessions: 'libs/players',
  match_rating_changes: 'libs/players',
  player_blocks: 'libs/players',
  idempotency_keys: 'libs/idempotency',
  probe_challenges: 'libs/latency',
  probe_measurements: 'libs/latency',
  player_latencies: 'libs/latency',
  parties: 'apps/api/src/parties',
  party_members: 'apps/api/src/parties',
  lobbies: 'apps/api/src/lobbies',
  lobby_members: 'apps/api/src/lobbies',
  queue_tickets: 'libs/tickets',
  queue_controls: 'libs/tickets',
  rule_sets: 'libs/rule-sets',
  matches: 'libs/matches',
  match_participants: 'libs/matches',
  backfill_requests: 'libs/matches',
  allocations: 'libs/allocation',
  assignments: 'libs/allocation',
  rejoin_tokens: 'libs/allocation',
  roster_manifests: 'libs/allocation',
  outbox: 'libs/outbox',
  outbox_delivery_attempts: 'libs/outbox',
  outbox_dispatchers: 'libs/outbox',
  audit_log: 'libs/persistence',
  schema_migrations: 'libs/persistence',
} as const satisfies Record<string, string>;

export type OwnedTable = keyof typeof TABLE_OWNERS;

/**
 * The read models: views an owner's migration creates over its own tables (and the views below
 * it) for the modules listed as its readers. A reader only SELECTs from one; the owner alone
 * changes its definition (a new migration), and the view's columns are the contract.
 */
export const READ_MODELS = {
  bound_tickets: { owner: 'libs/tickets', readers: ['libs/matches'] },
  durable_participants: { owner: 'libs/matches', readers: ['libs/allocation'] },
  listed_tickets: { owner: 'libs/matches', readers: ['libs/tickets'] },
  ended_matches: { owner: 'libs/matches', readers: ['libs/allocation'] },
  live_allocations: { owner: 'libs/allocation', readers: ['libs/matches'] },
  oldest_dead_letter: { owner: 'libs/outbox', readers: ['libs/idempotency'] },
} as const satisfies Record<string, { owner: string; readers: readonly string[] }>;

export type ReadModel = keyof typeof READ_MODELS;
