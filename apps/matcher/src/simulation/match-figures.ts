/** What {@link teamRatingGap} reads of a match (a ProposedMatch has it). */
export interface RatedTeams {
  readonly participants: readonly { readonly team: number; readonly rating: number }[];
}

/** The highest team's mean rating minus the lowest's (0 for a match of one team). */
export function teamRatingGap(match: RatedTeams): number {
  const teams = new Map<number, { sum: number; count: number }>();
  for (const participant of match.participants) {
    const team = teams.get(participant.team) ?? { sum: 0, count: 0 };
    team.sum += participant.rating;
    team.count += 1;
    teams.set(participant.team, team);
  }
  const means = [...teams.values()].map((team) => team.sum / team.count);
  return means.length > 1 ? Math.max(...means) - Math.min(...means) : 0;
}
