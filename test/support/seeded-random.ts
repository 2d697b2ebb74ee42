// The simulator's generator (apps/matcher/src/simulation): one implementation for tests and tools.
import { mulberry32 } from '../../apps/matcher/src/simulation/seeded-random';

export { mulberry32 };

/**
 * Runs `check` on the scenario `build` makes from each seed 1..`iterations` (every run checks the
 * same scenarios), naming the seed in a failure so it reproduces.
 */
export function forEachSeed<S>(
  iterations: number,
  build: (random: () => number) => S,
  check: (scenario: S) => void,
): void {
  for (let seed = 1; seed <= iterations; seed++) {
    const scenario = build(mulberry32(seed));
    try {
      check(scenario);
    } catch (error) {
      (error as Error).message = `seed ${seed}: ${(error as Error).message}`;
      throw error;
    }
  }
}
