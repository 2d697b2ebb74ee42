import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { manifestRevision, type SignedRosterManifest } from '@matchplane/join-auth';
import { DURABLE_PARTICIPANTS_OF_MATCH } from './allocation.store';
import {
  toDurable,
  type DurableParticipant,
  type DurableParticipantRow,
} from '@matchplane/matches';

export interface Assignment {
  readonly matchId: string;
  readonly playerId: string;
  readonly serverId: string;
  readonly endpoint: string;
  readonly joinToken: string;
  readonly keyId: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

/**
 * What {@link RosterStore.publish} did: published this roster; left the match's existing one
 * standing; or published nothing because the durable participants are no longer the signed ones.
 */
export type PublishOutcome = 'published' | 'already-published' | 'participants-changed';

/**
 * One published roster revision: the manifest over the whole roster, the players it lists
 * (ascending) and the assignments it adds (revision 1: everyone's; a backfill's: the added
 * players', the others keep the ones they hold).
 */
export interface RosterToPublish {
  readonly assignments: readonly Assignment[];
  readonly manifest: SignedRosterManifest;
  /** Every player the revision lists; defaults to the assignments' players (revision 1). */
  readonly playerIds?: readonly string[];
}

export interface LiveRosterEntry extends Assignment {
  readonly team: number;
}

/** The roster as it may be served now, re-validated against the durable participants. */
export type LiveRoster =
  | {
      readonly ok: true;
      readonly entries: readonly LiveRosterEntry[];
      readonly manifest: SignedRosterManifest;
    }
  | { readonly ok: false; readonly problem: string };

interface AssignmentRow {
  match_id: string;
  player_id: string;
  server_id: string;
  endpoint: string;
  join_token: string;
  key_id: string;
  issued_at: Date;
  expires_at: Date;
}

interface ManifestRow {
  match_id: string;
  server_id: string;
  entry_count: number;
  digest: Buffer;
  key_id: string;
  signature: Buffer;
  published_at: Date;
  revision: number;
  player_ids: string[] | null;
}

const MANIFEST_COLUMNS =
  'match_id, server_id, entry_count, digest, key_id, signature, published_at, revision, player_ids';

function toAssignment(row: AssignmentRow): Assignment {
  return {
    matchId: row.match_id,
    playerId: row.player_id,
    serverId: row.server_id,
    endpoint: row.endpoint,
    joinToken: row.join_token,
    keyId: row.key_id,
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
  };
}

function toManifest(row: ManifestRow): SignedRosterManifest {
  return {
    matchId: row.match_id,
    serverId: row.server_id,
    keyId: row.key_id,
    digest: row.digest.toString('hex'),
    entryCount: row.entry_count,
    // published_at is written as exactly the signed issuedAt (ms), so this reproduces it.
    issuedAt: row.published_at.getTime(),
    // Revision 1 is signed without the field (version 1 bytes), as the signer returned it.
    ...(row.revision > 1 ? { revision: row.revision } : {}),
    signature: row.signature.toString('base64url'),
  };
}

/** The assignments a manifest row lists, in canonical order (NULL: every one of the match). */
function listedBy(row: ManifestRow, assignments: readonly Assignment[]): Assignment[] {
  if (row.player_ids === null) return [...assignments];
  const listed = new Set(row.player_ids);
  return assignments.filter((a) => listed.has(a.playerId));
}

/** What one join key id still signs (see {@link RosterStore.joinKeyUsage}). */
export interface JoinKeyUsage {
  readonly keyId: string;
  /** Assignments under the key whose join token has not expired yet. */
  readonly unexpiredTokens: number;
  /** Rosters under the key whose allocation is still live (REQUESTED or ALLOCATED). */
  readonly liveRosters: number;
  /** The latest expiry of a token under the key, expired or not. */
  readonly lastTokenExpiresAt: Date | undefined;
}

/**
 * Owns `assignments` and `roster_manifests`: the join authorisations the allocator signed and the
 * signed manifest over the whole roster, published together or not at all.
 */
@Injectable()
export class RosterStore {
  /**
   * Publishes a roster revision once, in one statement: the manifest and the assignments it adds,
   * only while the match's durable participants are exactly the revision's players (re-checked in
   * the statement's own snapshot), only if it is the next revision (revision 1: the match has no
   * roster yet; a backfill's: the one after the newest), and only once (an earlier attempt's
   * stands: its tokens may be out already).
   */
  async publish(manager: EntityManager, roster: RosterToPublish): Promise<PublishOutcome> {
    const { manifest, assignments } = roster;
    const playerIds = [...(roster.playerIds ?? assignments.map((a) => a.playerId))].sort();
    if (playerIds.length !== manifest.entryCount) {
      throw new Error(
        `roster of match ${manifest.matchId}: ${playerIds.length} entries, manifest says ${manifest.entryCount}`,
      );
    }
    const revision = manifestRevision(manifest);
    const [row] = await manager.query<{ complete: boolean; published: boolean }[]>(
      `WITH durable AS (${DURABLE_PARTICIPANTS_OF_MATCH}),
            gate AS (
              SELECT ARRAY(SELECT player_id FROM durable ORDER BY 1) = $7::uuid[] AS complete,
                     (SELECT COALESCE(max(revision), 0) FROM roster_manifests WHERE match_id = $1)
                       = $13::int - 1 AS next),
            manifest AS (
              INSERT INTO roster_manifests (match_id, server_id, entry_count, digest, key_id, signature, published_at, revision, player_ids)
              SELECT $1, $2, $9, $10, $4, $11, $12, $13, $7 FROM gate WHERE gate.complete AND gate.next
              ON CONFLICT (match_id, revision) DO NOTHING
              RETURNING match_id),
            assigned AS (
              INSERT INTO assignments (match_id, player_id, server_id, endpoint, join_token, key_id, issued_at, expires_at)
              SELECT $1, a.player_id, $2, $3, a.join_token, $4, $5, $6
                FROM unnest($8::uuid[], $14::text[]) AS a(player_id, join_token)
               WHERE EXISTS (SELECT 1 FROM manifest))
       SELECT (SELECT complete FROM gate) AS complete,
              EXISTS (SELECT 1 FROM manifest) AS published`,
      [
        manifest.matchId,
        manifest.serverId,
        assignments[0]?.endpoint ?? '',
        manifest.keyId,
        assignments[0]?.issuedAt ?? new Date(manifest.issuedAt),
        assignments[0]?.expiresAt ?? new Date(manifest.issuedAt),
        playerIds,
        assignments.map((a) => a.playerId),
        manifest.entryCount,
        Buffer.from(manifest.digest, 'hex'),
        Buffer.from(manifest.signature, 'base64url'),
        new Date(manifest.issuedAt),
        revision,
        assignments.map((a) => a.joinToken),
      ],
    );
    if (row?.published) return 'published';
    return row?.complete ? 'already-published' : 'participants-changed';
  }

  /**
   * The newest roster revision as signed: its manifest and the assignments it lists, in
   * canonical order. What a server that already reported who came is served.
   */
  async signedRoster(
    manager: EntityManager,
    matchId: string,
  ): Promise<{ manifest: SignedRosterManifest; assignments: Assignment[] } | undefined> {
    const [row] = await manager.query<ManifestRow[]>(
      `SELECT ${MANIFEST_COLUMNS} FROM roster_manifests
        WHERE match_id = $1 ORDER BY revision DESC LIMIT 1`,
      [matchId],
    );
    if (!row) return undefined;
    return {
      manifest: toManifest(row),
      assignments: listedBy(row, await this.assignments(manager, matchId)),
    };
  }

  async manifest(
    manager: EntityManager,
    matchId: string,
  ): Promise<SignedRosterManifest | undefined> {
    const rows = await manager.query<ManifestRow[]>(
      `SELECT ${MANIFEST_COLUMNS} FROM roster_manifests
        WHERE match_id = $1 ORDER BY revision DESC LIMIT 1`,
      [matchId],
    );
    return rows[0] ? toManifest(rows[0]) : undefined;
  }

  /** The match's assignments in canonical order. */
  async assignments(manager: EntityManager, matchId: string): Promise<Assignment[]> {
    const rows = await manager.query<AssignmentRow[]>(
      `SELECT match_id, player_id, server_id, endpoint, join_token, key_id, issued_at, expires_at
         FROM assignments WHERE match_id = $1 ORDER BY player_id`,
      [matchId],
    );
    return rows.map(toAssignment);
  }

  /** One player's assignment (what the player connects with). */
  async assignmentFor(
    manager: EntityManager,
    matchId: string,
    playerId: string,
  ): Promise<Assignment | undefined> {
    const rows = await manager.query<AssignmentRow[]>(
      `SELECT match_id, player_id, server_id, endpoint, join_token, key_id, issued_at, expires_at
         FROM assignments WHERE match_id = $1 AND player_id = $2`,
      [matchId, playerId],
    );
    return rows[0] ? toAssignment(rows[0]) : undefined;
  }

  /**
   * The newest published roster revision for `serverId`, served only while it is still exactly the durable
   * participants (DURABLE_PARTICIPANTS_OF_MATCH), each holding an assignment to this server
   * that has not expired at `now`. Manifest, participants and assignments in one statement, so
   * one snapshot whatever the caller's isolation.
   */
  async liveRoster(
    manager: EntityManager,
    matchId: string,
    serverId: string,
    now: Date,
  ): Promise<LiveRoster> {
    const [row] = await manager.query<
      (ManifestRow & {
        durable: DurableParticipantRow[];
        assignments: (Omit<AssignmentRow, 'issued_at' | 'expires_at'> & {
          issued_at_ms: number;
          expires_at_ms: number;
        })[];
      })[]
    >(
      `SELECT r.match_id, r.server_id, r.entry_count, r.digest, r.key_id, r.signature, r.published_at,
              r.revision, r.player_ids,
              (SELECT COALESCE(json_agg(d ORDER BY d.player_id), '[]'::json)
                 FROM (${DURABLE_PARTICIPANTS_OF_MATCH}) d) AS durable,
              (SELECT COALESCE(json_agg(json_build_object(
                        'match_id', a.match_id, 'player_id', a.player_id, 'server_id', a.server_id,
                        'endpoint', a.endpoint, 'join_token', a.join_token, 'key_id', a.key_id,
                        'issued_at_ms', round(extract(epoch FROM a.issued_at) * 1000),
                        'expires_at_ms', round(extract(epoch FROM a.expires_at) * 1000))
                      ORDER BY a.player_id), '[]'::json)
                 FROM assignments a WHERE a.match_id = $1) AS assignments
         FROM roster_manifests r WHERE r.match_id = $1
        ORDER BY r.revision DESC LIMIT 1`,
      [matchId],
    );
    if (!row) return { ok: false, problem: 'the roster is not published yet' };
    const manifest = toManifest(row);
    if (manifest.serverId !== serverId) {
      return { ok: false, problem: 'the roster was published for another server' };
    }
    const durable = row.durable.map(toDurable);
    const assignments = listedBy(
      row,
      row.assignments.map(({ issued_at_ms, expires_at_ms, ...a }) =>
        toAssignment({
          ...a,
          issued_at: new Date(issued_at_ms),
          expires_at: new Date(expires_at_ms),
        }),
      ),
    );
    const problem = rosterProblem(durable, assignments, serverId, now);
    if (problem !== undefined) return { ok: false, problem };
    const teams = new Map(durable.map((p) => [p.playerId, p.team]));
    return {
      ok: true,
      manifest,
      entries: assignments.map((a) => ({ ...a, team: teams.get(a.playerId) ?? 0 })),
    };
  }

  /**
   * Every key id that signed a token or a roster still on record, with what it still signs at
   * `now`: a key can be removed from the key set once no unexpired token and no live match's
   * roster names it (docs/JOIN-AUTH.md, "Key rotation"). Rows purged by retention are gone, so
   * are their keys' uses.
   */
  async joinKeyUsage(manager: EntityManager, now: Date): Promise<JoinKeyUsage[]> {
    const rows = await manager.query<
      {
        key_id: string;
        unexpired_tokens: number;
        live_rosters: number;
        last_token_expires_at: Date | null;
      }[]
    >(
      `SELECT key_id,
              sum(unexpired_tokens)::int AS unexpired_tokens,
              sum(live_rosters)::int AS live_rosters,
              max(last_token_expires_at) AS last_token_expires_at
         FROM (SELECT key_id, count(*) FILTER (WHERE expires_at > $1) AS unexpired_tokens,
                      0 AS live_rosters, max(expires_at) AS last_token_expires_at
                 FROM assignments GROUP BY key_id
               UNION ALL
               SELECT m.key_id, 0, count(*) FILTER (WHERE a.state IN ('REQUESTED', 'ALLOCATED')), NULL
                 FROM roster_manifests m LEFT JOIN allocations a ON a.match_id = m.match_id
                GROUP BY m.key_id) AS uses
        GROUP BY key_id
        ORDER BY key_id`,
      [now],
    );
    return rows.map((row) => ({
      keyId: row.key_id,
      unexpiredTokens: row.unexpired_tokens,
      liveRosters: row.live_rosters,
      lastTokenExpiresAt: row.last_token_expires_at ?? undefined,
    }));
  }
}

function rosterProblem(
  durable: readonly DurableParticipant[],
  assignments: readonly Assignment[],
  serverId: string,
  now: Date,
): string | undefined {
  const assigned = new Map(assignments.map((a) => [a.playerId, a]));
  for (const participant of durable) {
    const assignment = assigned.get(participant.playerId);
    if (!assignment) return `participant ${participant.playerId} holds no assignment`;
    if (assignment.serverId !== serverId) {
      return `participant ${participant.playerId} is assigned to another server`;
    }
    if (assignment.expiresAt.getTime() <= now.getTime()) {
      return `the assignment of participant ${participant.playerId} expired`;
    }
  }
  if (assignments.length !== durable.length) {
    return 'the roster names a player who is no longer a participant';
  }
  return undefined;
}
