/**
 * The matcher's cost curve (`--candidates-curve`): one figure per pool size, and how the pure
 * pass's time grows between the smallest and the largest size next to n log n.
 */
import { UsageError } from './bench.cli';

export const DEFAULT_CANDIDATES_CURVE = '10000,30000,100000';

/** Pool sizes from `10000,30000,100000` (ascending, distinct), or none for `off`. */
export function candidatesCurve(text: string, limits: { min: number; max: number }): number[] {
  if (text === 'off') return [];
  const sizes = text.split(',').map((item) => (/^[0-9]+$/.test(item) ? Number(item) : Number.NaN));
  const bad = sizes.find(
    (size) => !Number.isSafeInteger(size) || size < limits.min || size > limits.max,
  );
  if (bad !== undefined || sizes.length === 0) {
    throw new UsageError(
      `--candidates-curve must be "off" or pool sizes from ${limits.min} to ${limits.max} separated by commas, got ${JSON.stringify(text)}`,
    );
  }
  return [...new Set(sizes)].sort((a, b) => a - b);
}

export interface PassGrowth {
  readonly from_candidates: number;
  readonly to_candidates: number;
  /** pass ms at the largest size / at the smallest. */
  readonly ms_ratio: number;
  /** (n log n at the largest) / (n log n at the smallest): 12.5 from 10,000 to 100,000. */
  readonly n_log_n_ratio: number;
  /** ms_ratio <= n_log_n_ratio: the pass grew no worse than n log n. */
  readonly within_n_log_n: boolean;
}

/** Growth between the smallest and the largest size of `msBySize`; null with fewer than two. */
export function passGrowth(msBySize: ReadonlyMap<number, number>): PassGrowth | null {
  const sizes = [...msBySize.keys()].sort((a, b) => a - b);
  const from = sizes[0];
  const to = sizes.at(-1);
  if (from === undefined || to === undefined || from === to) return null;
  const msRatio = (msBySize.get(to) ?? 0) / Math.max(Number.EPSILON, msBySize.get(from) ?? 0);
  const nLogNRatio = (to * Math.log(to)) / (from * Math.log(from));
  return {
    from_candidates: from,
    to_candidates: to,
    ms_ratio: Math.round(msRatio * 100) / 100,
    n_log_n_ratio: Math.round(nLogNRatio * 100) / 100,
    within_n_log_n: msRatio <= nLogNRatio,
  };
}

/** A figure per size, keyed by the size as text (JSON object keys). */
export function bySize<T>(figures: ReadonlyMap<number, T>): Record<string, T> {
  return Object.fromEntries([...figures].map(([size, figure]) => [String(size), figure]));
}

/** Whether a per-size figure never falls from one size to the next larger one. */
export function notFalling(figures: ReadonlyMap<number, number>): boolean {
  const values = [...figures].sort(([a], [b]) => a - b).map(([, value]) => value);
  return values.every((value, index) => index === 0 || value >= (values[index - 1] ?? 0));
}
