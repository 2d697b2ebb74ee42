/**
 * Why a match was placed where it was, in the matcher's own terms (docs/architecture/
 * match-formation.md): among the regions every participant measured, the best one has the lowest
 * worst-participant RTT (then the lowest sum, then the name). The figures are the participants'
 * ticket `predictedRttMs`, which is what the matcher saw.
 */

export interface PlacedParticipant {
  readonly label: string;
  readonly predictedRttMs: Readonly<Record<string, number>>;
}

export interface RegionFigure {
  readonly region: string;
  /** The worst (highest) participant RTT in the region. */
  readonly worstMs: number;
  readonly sumMs: number;
}

/** Every region all participants measured, best first by the matcher's order. */
export function rankRegions(participants: readonly PlacedParticipant[]): RegionFigure[] {
  const [first, ...rest] = participants;
  if (!first) return [];
  const common = Object.keys(first.predictedRttMs).filter((region) =>
    rest.every((p) => p.predictedRttMs[region] !== undefined),
  );
  return common
    .map((region) => {
      const rtts = participants.map((p) => p.predictedRttMs[region]!);
      return {
        region,
        worstMs: Math.max(...rtts),
        sumMs: rtts.reduce((a, b) => a + b, 0),
      };
    })
    .sort(
      (a, b) =>
        a.worstMs - b.worstMs ||
        a.sumMs - b.sumMs ||
        (a.region < b.region ? -1 : a.region > b.region ? 1 : 0),
    );
}

/** Lines explaining the placement of a match in `region`. */
export function explainPlacement(
  region: string,
  participants: readonly PlacedParticipant[],
): string[] {
  const ranked = rankRegions(participants);
  const chosen = ranked.find((figure) => figure.region === region);
  const lines: string[] = [];
  if (!chosen) {
    lines.push(`placed in ${region}, a region not every participant measured (unexpected)`);
    return lines;
  }
  const each = participants.map((p) => `${p.label} ${ms(p.predictedRttMs[region]!)}`).join(', ');
  lines.push(`why ${region}: worst participant RTT there is ${ms(chosen.worstMs)} (${each})`);
  const others = ranked.filter((figure) => figure.region !== region);
  if (others.length > 0) {
    lines.push(
      `  other regions, worst participant RTT: ${others
        .map((figure) => `${figure.region} ${ms(figure.worstMs)}`)
        .join(', ')}`,
    );
  }
  const best = ranked[0]!;
  if (best.region !== region) {
    lines.push(
      `  note: ${best.region} (${ms(best.worstMs)}) ranks better on these figures; the matcher decided on the estimates of its pass`,
    );
  }
  return lines;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
