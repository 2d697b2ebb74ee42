// The simulator's generator (apps/matcher/src/simulation): one implementation for tests and tools.
export { mulberry32 } from '../../apps/matcher/src/simulation/seeded-random';
