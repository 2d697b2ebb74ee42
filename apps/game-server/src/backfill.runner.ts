import { Logger } from '@nestjs/common';
import type { BackfillResponse } from '@matchplane/contracts';
import type { ServerClient } from '@matchplane/sdk';
import { describeError, isUnavailable } from './api-failures';
import type { JoinListener } from './join.listener';
import { sleep } from './match.runner';
import type { RosterGate, RosterPlayer, VerifiedRoster } from './roster.gate';

export interface BackfillRunnerOptions {
  /** How long the matcher may search before a request expires (BACKFILL_TIMEOUT_SECONDS). */
  timeoutSeconds: number;
  /** Interval of polling a request until it is published (BACKFILL_POLL_MS). */
  pollMs: number;
  /** How long the added players have to connect once accepted (CONNECT_DEADLINE_MS). */
  connectDeadlineMs: number;
}

/** A team with fewer players connected than its roster holds, and how many it lacks. */
export interface ShortTeam {
  readonly team: number;
  readonly slots: number;
}

/** The teams initial-connect left short-handed, ascending. */
export function shortTeams(
  roster: VerifiedRoster,
  connectedPlayerIds: readonly string[],
): ShortTeam[] {
  const connected = new Set(connectedPlayerIds);
  return roster.teams.flatMap((team) => {
    const onTeam = [...roster.players.values()].filter((player) => player.team === team);
    const slots = onTeam.filter((player) => !connected.has(player.playerId)).length;
    return slots > 0 ? [{ team, slots }] : [];
  });
}

const TERMINAL: ReadonlySet<BackfillResponse['state']> = new Set([
  'FILLED',
  'CANCELLED',
  'EXPIRED',
]);

/**
 * Fills the places no-shows left while the match plays: per short team it requests a backfill,
 * polls it until the control plane has published a roster revision carrying the added players,
 * checks that revision with the roster gate (refused: the request is cancelled), lets the added
 * players join, accepts, waits for them to connect and reports who did. Requests of several teams
 * run side by side; taking a revision is one at a time. When `signal` aborts (the match ended)
 * each request still open is cancelled, or, once accepted, reported with who connected so far.
 * Never throws: a backfill that fails leaves the match short-handed, which it already was.
 */
export class BackfillRunner {
  private readonly logger = new Logger(BackfillRunner.name);
  /** Serialises taking roster revisions, so two requests never check against a stale current. */
  private taking: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: ServerClient,
    private readonly gate: RosterGate,
    private readonly players: JoinListener,
    private readonly options: BackfillRunnerOptions,
  ) {}

  async run(teams: readonly ShortTeam[], signal: AbortSignal): Promise<void> {
    await Promise.all(teams.map((team) => this.fill(team, signal)));
  }

  private async fill({ team, slots }: ShortTeam, signal: AbortSignal): Promise<void> {
    let request: BackfillResponse;
    try {
      request = await this.client.requestBackfill({
        team,
        slots,
        timeoutSeconds: this.options.timeoutSeconds,
      });
    } catch (error) {
      this.logger.warn(
        `backfill of team ${team} (${plural(slots, 'slot')}) not requested: ${describeError(error)}; playing on short-handed`,
      );
      return;
    }
    const id = request.requestId;
    this.logger.log(
      `backfill ${id} requested: team ${team}, ${plural(slots, 'slot')}, ${request.state} until ${request.expiresAt}`,
    );

    let step = 'poll the request';
    try {
      request = await this.untilPublished(request, signal);
      if (signal.aborted) return await this.endEarly(request);
      if (request.state !== 'PUBLISHED') {
        this.logger.warn(`backfill ${id} ended ${request.state}${reasonOf(request)}`);
        return;
      }

      step = 'check the roster revision';
      const revision = request.rosterRevision;
      const refusal =
        revision === undefined
          ? 'PUBLISHED without a roster revision'
          : await this.takeRevision(request, revision);
      if (revision === undefined || refusal !== undefined) {
        this.logger.error(`backfill ${id}: ${refusal}; cancelling the request`);
        await this.cancel(id);
        return;
      }

      step = 'accept';
      request = await this.client.acceptBackfill(id, revision);
      if (request.state !== 'ASSIGNED') {
        this.logger.warn(`backfill ${id} not accepted: ${request.state}${reasonOf(request)}`);
        this.players.closeLateJoining(request.playerIds);
        return;
      }
      this.logger.log(
        `backfill ${id} accepted roster revision ${request.rosterRevision ?? '?'}: ASSIGNED, waiting up to ${this.options.connectDeadlineMs} ms for ${JSON.stringify(request.playerIds)}`,
      );

      step = 'wait for the added players';
      const everyone = await Promise.race([
        this.players.connected(request.playerIds).then(() => true),
        sleep(this.options.connectDeadlineMs, signal).then(() => false),
      ]);
      step = 'report who connected';
      await this.reportConnect(
        request,
        everyone
          ? 'every added player connected'
          : signal.aborted
            ? 'match over'
            : 'deadline passed',
      );
    } catch (error) {
      this.logger.warn(`backfill ${id}: could not ${step}: ${describeError(error)}`);
      if (request.state !== 'ASSIGNED') await this.cancel(id);
    }
  }

  /** Polls until PUBLISHED, a terminal state, or `signal` aborts; logs each new state. */
  private async untilPublished(
    first: BackfillResponse,
    signal: AbortSignal,
  ): Promise<BackfillResponse> {
    let request = first;
    while (request.state !== 'PUBLISHED' && !TERMINAL.has(request.state)) {
      if (!(await sleep(this.options.pollMs, signal))) return request;
      let polled: BackfillResponse;
      try {
        polled = await this.client.backfill(request.requestId);
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        this.logger.warn(
          `backfill ${request.requestId} not polled (${describeError(error)}); polling on`,
        );
        continue;
      }
      if (polled.state !== request.state) {
        this.logger.log(
          `backfill ${polled.requestId}: ${polled.state}${reasonOf(polled)}${polled.playerIds.length > 0 ? `, players ${JSON.stringify(polled.playerIds)}` : ''}${polled.rosterRevision !== undefined ? `, roster revision ${polled.rosterRevision}` : ''}`,
        );
      }
      request = polled;
    }
    return request;
  }

  /**
   * Fetches and checks the roster revision that carries `request`'s players (unless a revision
   * taken for another request already does) and lets them join. Returns why it was refused, or
   * undefined once taken.
   */
  private takeRevision(request: BackfillResponse, wanted: number): Promise<string | undefined> {
    const taken = this.taking.then(() => this.takeRevisionNow(request, wanted));
    this.taking = taken.catch(() => undefined);
    return taken;
  }

  private async takeRevisionNow(
    request: BackfillResponse,
    wanted: number,
  ): Promise<string | undefined> {
    const current = this.players.currentRoster();
    let next: { roster: VerifiedRoster; added: readonly RosterPlayer[] } | undefined;
    if (current.revision < wanted) {
      const published = await this.client.roster();
      const check = this.gate.checkRevision(
        current,
        published,
        Date.now(),
        this.players.connectedPlayerIds(),
      );
      if (!check.ok) {
        return `roster revision ${String(published.revision)} refused (${check.reason}): ${check.message}`;
      }
      if (check.roster.revision < wanted) {
        return `roster revision ${check.roster.revision} is older than the request's ${wanted}`;
      }
      next = check;
    }
    const roster = next?.roster ?? current;
    const misplaced = request.playerIds.filter(
      (playerId) => roster.players.get(playerId)?.team !== request.team,
    );
    if (misplaced.length > 0) {
      return `roster revision ${roster.revision} does not place ${JSON.stringify(misplaced)} on team ${request.team}`;
    }
    if (next !== undefined) {
      this.players.takeRevision(next.roster, next.added);
      this.logger.log(
        `roster revision ${roster.revision} verified (${roster.players.size} players, manifest key ${JSON.stringify(roster.keyId)}): admitting added players ${JSON.stringify(next.added.map((p) => `${p.playerId} team ${p.team}`))}`,
      );
    }
    return undefined;
  }

  private async reportConnect(request: BackfillResponse, why: string): Promise<void> {
    this.players.closeLateJoining(request.playerIds);
    const connected = new Set(this.players.connectedPlayerIds());
    const present = request.playerIds.filter((playerId) => connected.has(playerId));
    this.logger.log(
      `backfill ${request.requestId}: ${why}; reporting connect with ${present.length}/${request.playerIds.length} added players`,
    );
    const filled = await this.client.reportBackfillConnect(request.requestId, present);
    this.logger.log(
      `backfill ${request.requestId} ${filled.state}: no-shows ${JSON.stringify(filled.noShowPlayerIds)}`,
    );
  }

  /** The match ended first: withdraw the request, or report an accepted one as it stands. */
  private async endEarly(request: BackfillResponse): Promise<void> {
    if (TERMINAL.has(request.state)) return;
    this.logger.log(`backfill ${request.requestId}: the match ended while ${request.state}`);
    await this.cancel(request.requestId);
  }

  /** Best effort: an unanswered cancel expires on its own, or ends with the match. */
  private async cancel(requestId: string): Promise<void> {
    try {
      const cancelled = await this.client.cancelBackfill(requestId);
      this.logger.log(`backfill ${requestId} ${cancelled.state}${reasonOf(cancelled)}`);
    } catch (error) {
      this.logger.warn(`backfill ${requestId} not cancelled: ${describeError(error)}`);
    }
  }
}

function reasonOf(request: BackfillResponse): string {
  return request.reason !== undefined ? ` (${request.reason})` : '';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
