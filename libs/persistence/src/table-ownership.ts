/**
 * Which module owns each table: the one place that says so (test/unit/table-ownership.spec.ts
 * reads it, docs/ARCHITECTURE.md "Table ownership" explains it). A module is a folder; every SQL
 * statement that names a table lives under its owner's folder, and other modules call the owner's
 * store. A statement that must span two owners' tables to stay one round trip names the other
 * owner's table only through a fragment that owner exports (see the "Table ownership" section).
 */
export const TABLE_OWNERS = {
  players: 'libs/players',
  sessions: 'libs/players',
  match_rating_changes: 'libs/players',
  idempotency_keys: 'libs/idempotency',
  probe_challenges: 'libs/latency',
  probe_measurements: 'libs/latency',
  player_latencies: 'libs/latency',
  parties: 'apps/api/src/parties',
  party_members: 'apps/api/src/parties',
  queue_tickets: 'libs/tickets',
  queue_controls: 'libs/tickets',
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
