import type { GameEnded } from '@matchplane/sdk';
import type { ControlPlaneView } from './control-plane';
import { DemoFailure } from './failure';
import { explainPlacement, type PlacedParticipant } from './placement';
import { short, type Timeline } from './timeline';

interface BoardMatch {
  readonly id: string;
  readonly participants: PlacedParticipant[];
  readonly teams: Map<string, number>;
  region?: string;
  mode?: string;
  winningTeam?: number;
  formedAt: number;
  completedAt?: number;
}

/**
 * What the demo knows about each match across its players: once every participant has seen its
 * ticket MATCHED, the match's region (from the control plane) and why it was placed there (from
 * the participants' tickets); at the end, one summary line per match.
 */
export class MatchBoard {
  private readonly matches = new Map<string, BoardMatch>();

  constructor(
    private readonly timeline: Timeline,
    private readonly view: ControlPlaneView,
    private readonly matchSize: number,
    private readonly fail: (failure: DemoFailure) => void,
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
    if (match.participants.length === this.matchSize) {
      this.announce(match).catch((error: unknown) =>
        this.fail(
          new DemoFailure(
            `could not read match ${short(matchId)}: ${(error as Error).message}`,
            undefined,
            { cause: error },
          ),
        ),
      );
    }
  }

  assigned(matchId: string, label: string, team: number): void {
    this.entry(matchId).teams.set(label, team);
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
      return `match ${short(match.id)} ${match.mode ?? '?'} in ${match.region ?? '?'}: ${lineup}${winner}${took}`;
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

  private async announce(match: BoardMatch): Promise<void> {
    const row = await this.view.match(match.id);
    if (!row) throw new Error('not in the database');
    match.region = row.region;
    match.mode = row.mode;
    const who = match.participants.map((p) => p.label).join(' + ');
    this.timeline.note(
      'placement',
      `match ${short(match.id)} (${row.mode}) formed in ${row.region}: ${who}`,
    );
    for (const line of explainPlacement(row.region, match.participants))
      this.timeline.note('placement', line);
  }
}

/** P2 before P10. */
function byLabel(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
