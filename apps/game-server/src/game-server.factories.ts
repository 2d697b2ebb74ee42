import { createHash, randomUUID } from 'node:crypto';
import type { RosterEntryView, RosterResponse } from '@matchplane/contracts';
import type { VerifiedRoster } from './roster.gate';
import {
  canonicalRosterOrder,
  KeySet,
  type JoinTokenSigner,
  type UnsignedJoinClaims,
  manifestRevision,
} from '@matchplane/join-auth';

// Test factories for the game server's specs (integration and e2e); the app never imports them.

/** A deterministic 32-byte test key per label. */
export function testKeyBytes(label: string): Buffer {
  return createHash('sha256').update(`game-server spec key ${label}`).digest();
}

/** The key file contents (`{keyId: base64Key}`) and the matching key set. */
export function newTestKeys(...keyIds: string[]): { keys: KeySet; file: Record<string, string> } {
  const file = Object.fromEntries(keyIds.map((id) => [id, testKeyBytes(id).toString('base64')]));
  return { keys: KeySet.fromBase64Map(file), file };
}

export interface RosterPlayerSpec {
  playerId?: string;
  team: number;
  /** Signs this player's token instead of the roster's signer (e.g. an older key). */
  signer?: JoinTokenSigner;
  /** Claims to override in this player's token (serverId, expiresAt, ...). */
  claims?: Partial<UnsignedJoinClaims>;
}

export interface RosterSpec {
  /** Signs the manifest, and every token without its own signer. */
  signer: JoinTokenSigner;
  serverId: string;
  matchId?: string;
  endpoint?: string;
  players: RosterPlayerSpec[];
  /** Epoch ms the tokens and manifest are issued at; default now. */
  issuedAt?: number;
  /** Token lifetime; default 5 minutes. */
  lifetimeMs?: number;
}

/** A roster as GET /v1/servers/{id}/roster answers it, signed as the allocator signs it. */
export function newSignedRoster(spec: RosterSpec): RosterResponse {
  const matchId = spec.matchId ?? randomUUID();
  const endpoint = spec.endpoint ?? '127.0.0.1:7777';
  const issuedAt = spec.issuedAt ?? Date.now();
  const binding = { matchId, serverId: spec.serverId, endpoint, issuedAt };
  return signRosterEntries(
    spec.signer,
    binding,
    spec.players.map((player) =>
      signEntry(spec.signer, binding, issuedAt + (spec.lifetimeMs ?? 300_000), player),
    ),
  );
}

export interface RosterRevisionSpec {
  /** Signs the manifest, and every added token without its own signer. */
  signer: JoinTokenSigner;
  /** The roster the backfill revises; its entries keep their tokens. */
  base: RosterResponse;
  /** The revision the manifest signs; default the base's plus one. */
  revision?: number;
  /** Players dropped from the base (no-shows). */
  drop?: readonly string[];
  /** Players the backfill adds, with new tokens. */
  add: RosterPlayerSpec[];
  /** Epoch ms the added tokens and the manifest are issued at; default now. */
  issuedAt?: number;
  /** Added tokens' lifetime; default 5 minutes. */
  lifetimeMs?: number;
}

/** A later roster revision as a backfill publishes it: the base's entries unchanged, less `drop`, plus `add`. */
export function newRosterRevision(spec: RosterRevisionSpec): RosterResponse {
  const { base } = spec;
  const issuedAt = spec.issuedAt ?? Date.now();
  const binding = {
    matchId: base.matchId,
    serverId: base.serverId,
    endpoint: base.endpoint,
    issuedAt,
  };
  const kept = base.entries.filter((entry) => !(spec.drop ?? []).includes(entry.playerId));
  const added = spec.add.map((player) =>
    signEntry(spec.signer, binding, issuedAt + (spec.lifetimeMs ?? 300_000), player),
  );
  return signRosterEntries(spec.signer, binding, [...kept, ...added], {
    revision: spec.revision ?? base.revision + 1,
  });
}

function signEntry(
  signer: JoinTokenSigner,
  binding: { matchId: string; serverId: string; endpoint: string; issuedAt: number },
  expiresAt: number,
  player: RosterPlayerSpec,
): RosterEntryView {
  const claims: UnsignedJoinClaims = {
    ...binding,
    playerId: player.playerId ?? randomUUID(),
    expiresAt,
    ...player.claims,
  };
  return {
    playerId: claims.playerId,
    team: player.team,
    joinToken: (player.signer ?? signer).sign(claims),
    expiresAt: new Date(claims.expiresAt).toISOString(),
  };
}

/**
 * Publishes `views` (sorted into canonical order) with a manifest `signer` signs over them, as
 * roster revision `revision` when given (absent: the first roster, signed without one).
 */
export function signRosterEntries(
  signer: JoinTokenSigner,
  roster: { matchId: string; serverId: string; endpoint: string; issuedAt: number },
  views: readonly RosterEntryView[],
  options: { revision?: number } = {},
): RosterResponse {
  const byPlayer = new Map(views.map((view) => [view.playerId, view]));
  const entries = canonicalRosterOrder(
    views.map((view) => ({ playerId: view.playerId, token: view.joinToken })),
  );
  const manifest = signer.signRoster({
    matchId: roster.matchId,
    serverId: roster.serverId,
    entries,
    issuedAt: roster.issuedAt,
    ...(options.revision === undefined ? {} : { revision: options.revision }),
  });
  return {
    matchId: roster.matchId,
    serverId: roster.serverId,
    endpoint: roster.endpoint,
    mode: 'duel',
    region: 'eu-west',
    revision: manifestRevision(manifest),
    entries: entries.map((entry) => byPlayer.get(entry.playerId)!),
    manifest: { ...manifest, revision: manifestRevision(manifest) },
  };
}

/** A roster as the gate hands it on once verified, for specs of what comes after the gate. */
export function newVerifiedRoster(players: readonly (readonly [string, number])[]): VerifiedRoster {
  return {
    matchId: '44444444-4444-4444-8444-444444444444',
    serverId: 'gs-1',
    endpoint: '127.0.0.1:7777',
    mode: 'duel',
    keyId: 'k1',
    revision: 1,
    tokens: new Map(players.map(([playerId]) => [playerId, `token-of-${playerId}`])),
    players: new Map(players.map(([playerId, team]) => [playerId, { playerId, team }])),
    teams: [...new Set(players.map(([, team]) => team))].sort((a, b) => a - b),
  };
}
