/** One region a match could be hosted in instead of its own, with its players' RTT there. */
export interface FallbackRegion {
  readonly region: string;
  /** The highest RTT of any of the match's players to this region (ms). */
  readonly worstRttMs: number;
  readonly sumRttMs: number;
}

/**
 * Where a match may be hosted when its own region has no free server: every region each of its
 * players has a measured RTT to, other than its own, whose worst RTT is at most `maxWorstRttMs`,
 * best first by the matcher's own rule (lowest worst RTT, then lowest sum, then name). `served`
 * (the regions the provider has servers in) narrows the list.
 */
export function rankFallbackRegions(
  playerRtts: readonly Readonly<Record<string, number>>[],
  options: {
    readonly matchRegion: string;
    readonly maxWorstRttMs: number;
    readonly served: readonly string[];
  },
): FallbackRegion[] {
  if (playerRtts.length === 0) return [];
  const ranked: FallbackRegion[] = [];
  for (const region of new Set(options.served)) {
    if (region === options.matchRegion) continue;
    let worst = 0;
    let sum = 0;
    let measuredByAll = true;
    for (const rtts of playerRtts) {
      const rtt = Object.hasOwn(rtts, region) ? rtts[region] : undefined;
      if (typeof rtt !== 'number' || !Number.isFinite(rtt)) {
        measuredByAll = false;
        break;
      }
      worst = Math.max(worst, rtt);
      sum += rtt;
    }
    if (measuredByAll && worst <= options.maxWorstRttMs) {
      ranked.push({ region, worstRttMs: worst, sumRttMs: sum });
    }
  }
  return ranked.sort(
    (a, b) =>
      a.worstRttMs - b.worstRttMs ||
      a.sumRttMs - b.sumRttMs ||
      (a.region < b.region ? -1 : a.region > b.region ? 1 : 0),
  );
}
