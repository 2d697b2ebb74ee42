import { UsageError } from '../bench/bench.cli';
import { candidatesCurve, notFalling, passGrowth } from '../bench/matcher-curve';
import { pureCostCurve } from '../bench/matcher-pure.bench';

/** bench:matcher's cost curve without running the bench at its sizes (benches are not run in tests). */
describe('bench:matcher cost curve', () => {
  const limits = { min: 2, max: 200_000 };

  it('reads pool sizes ascending and distinct, or none for off', () => {
    expect(candidatesCurve('100000,10000,30000,10000', limits)).toEqual([10_000, 30_000, 100_000]);
    expect(candidatesCurve('off', limits)).toEqual([]);
  });

  it.each(['', '10000,', '1e5', '-5', '1', '300000', '10000;30000'])(
    'refuses %j with a usage error',
    (text) => {
      expect(() => candidatesCurve(text, limits)).toThrow(UsageError);
    },
  );

  it('compares the growth from the smallest to the largest size with n log n (12.5 for 10k -> 100k)', () => {
    const within = passGrowth(
      new Map([
        [10_000, 200],
        [30_000, 600],
        [100_000, 2_400],
      ]),
    );
    expect(within).toEqual({
      from_candidates: 10_000,
      to_candidates: 100_000,
      ms_ratio: 12,
      n_log_n_ratio: 12.5,
      within_n_log_n: true,
    });
    expect(
      passGrowth(
        new Map([
          [10_000, 200],
          [100_000, 2_600],
        ]),
      )?.within_n_log_n,
    ).toBe(false);
    expect(passGrowth(new Map([[10_000, 200]]))).toBeNull();
  });

  it('says whether a per-size figure never falls as the pool grows', () => {
    expect(
      notFalling(
        new Map([
          [30_000, 400],
          [10_000, 300],
          [100_000, 400],
        ]),
      ),
    ).toBe(true);
    expect(
      notFalling(
        new Map([
          [10_000, 300],
          [30_000, 400],
          [100_000, 390],
        ]),
      ),
    ).toBe(false);
  });

  it('times the pure pass at each size, keyed by the size', () => {
    const curve = pureCostCurve([50, 200], { passes: 1 });
    expect(Object.keys(curve.pass_ms_by_candidates)).toEqual(['50', '200']);
    expect(curve.pass_growth).toMatchObject({ from_candidates: 50, to_candidates: 200 });
  });
});
