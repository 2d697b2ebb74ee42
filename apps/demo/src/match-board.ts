import type { GameEnded } from '@matchplane/sdk';
import { DemoFailure } from './failure';
import { explainPlacement, type PlacedParticipant } from './placement';
import { short, type Timeline } from './timeline';

interface BoardMatch {
  readonly id: string;
  readonly participants: PlacedParticipant[];
  readonly teams: Map<string, number>;
  region?: string;
  announced?: boolean;
  winningTeam?: number;
  formedAt: number;
  completedAt?: number;
}

/** A match state one player's notifications delivered. */
export interface ObservedState {
  readonly matchId: string;
  readonly state: string;
  readonly revision: number;
}

const TERMINAL: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/**
 * What the demo knows about each match across its players, all of it from the player API as any
 * game client sees it: once every participant has seen its ticket MATCHED and one holds its
 * assignment, the match's region (from the assignment) and why it was placed there (from the
 * participants' tickets); the match's latest state, as the players' notifications tell it; at
 * the end, one summary line per match.
 */
export class MatchBoard {
  private readonly matches = new Map<string, BoardMatch>();
  private readonly states = new Map<string, ObservedState>();
  private readonly stateWaiters: { readonly matchId: string; readonly check: () => boolean }[] = [];

  constructor(
    private readonly timeline: Timeline,
    private readonly mode: string,
    private readonly matchSize: number,
  ) {}

  get size(): number {
    return this.matches.size;
  }

  ids(): string[] {
    return [...this.matches.keys()];
  }

  /** A participant saw its ticket MATCHED into `matchId` (with the RTTs the matcher used). */
  matched(matchId: string, participant: PlacedParticipant): void {
    const match = this.entry(matchId);
    match.participants.push(participant);
    match.participants.sort((a, b) => byLabel(a.label, b.label));
    this.announce(match);
  }

  /** A participant got its assignment: its team, and the region the match was placed in. */
  assigned(matchId: string, label: string, team: number, region: string): void {
    const match = this.entry(matchId);
    match.teams.set(label, team);
    match.region ??= region;
    this.announce(match);
  }

  /** A participant was notified of the match's state (each participant is told the same). */
  observed(event: ObservedState): void {
    const known = this.states.get(event.matchId);
    if (known && known.revision >= event.revision) return;
    this.states.set(event.matchId, event);
    for (const waiter of [...this.stateWaiters])
      if (waiter.matchId === event.matchId && waiter.check())
        this.stateWaiters.splice(this.stateWaiters.indexOf(waiter), 1);
  }

  /** The match's latest state its participants were notified of. */
  stateOf(matchId: string): string | undefined {
    return this.states.get(matchId)?.state;
  }

  /** Resolves once a participant is notified that the match is in `state`; a terminal state other than it is an error. */
  untilState(matchId: string, state: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const current = this.stateOf(matchId);
        if (current === state) resolve();
        else if (current !== undefined && TERMINAL.has(current))
          reject(
            new DemoFailure(
              `match ${short(matchId)} ended ${current} instead of reaching ${state}`,
              'allocator',
            ),
          );
        else return false;
        return true;
      };
      if (!check()) this.stateWaiters.push({ matchId, check });
    });
  }

  finished(matchId: string, ended: GameEnded): void {
    const match = this.entry(matchId);
    match.winningTeam = ended.winningTeam;
    match.completedAt ??= this.timeline.elapsedSeconds();
  }

  /** One line per match: region, teams, winner, time from formation to result. */
  summary(): string[] {
    return [...this.matches.values()].map((match) => {
      const teams = new Map<number, string[]>();
      for (const [label, team] of match.teams) teams.set(team, [...(teams.get(team) ?? []), label]);
      const lineup = [...teams.entries()]
        .sort(([a], [b]) => a - b)
        .map(([team, labels]) => `team ${team}: ${labels.sort(byLabel).join(', ')}`)
        .join(' vs ');
      const took =
        match.completedAt === undefined
          ? ''
          : `, ${(match.completedAt - match.formedAt).toFixed(1)} s from formed to result`;
      const winner = match.winningTeam === undefined ? '' : `, team ${match.winningTeam} won`;
      return `match ${short(match.id)} ${this.mode} in ${match.region ?? '?'}: ${lineup}${winner}${took}`;
    });
  }

  private entry(matchId: string): BoardMatch {
    let match = this.matches.get(matchId);
    if (!match) {
      match = {
        id: matchId,
        participants: [],
        teams: new Map(),
        formedAt: this.timeline.elapsedSeconds(),
      };
      this.matches.set(matchId, match);
    }
    return match;
  }

  /** Once, when every participant is known and the region is (a backfill joins later). */
  private announce(match: BoardMatch): void {
    const region = match.region;
    if (match.announced || region === undefined || match.participants.length < this.matchSize)
      return;
    match.announced = true;
    const who = match.participants.map((p) => p.label).join(' + ');
    this.timeline.note(
      'placement',
      `match ${short(match.id)} (${this.mode}) formed in ${region}: ${who}`,
    );
    for (const line of explainPlacement(region, match.participants))
      this.timeline.note('placement', line);
  }
}

/** P2 before P10. */
function byLabel(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
