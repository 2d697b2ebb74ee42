import { DomainError } from '../shared/domain.error';
import { latencyEstimate, retainSamples } from './latency-estimate';

describe('latencyEstimate', () => {
  it('is the median, so one outlier does not move it', () => {
    expect(latencyEstimate([40, 42, 900])).toBe(42);
    expect(latencyEstimate([900, 40, 42])).toBe(42);
  });

  it('averages the two middle samples of an even count', () => {
    expect(latencyEstimate([40, 50])).toBe(45);
  });

  it('refuses an empty sample list', () => {
    expect(() => latencyEstimate([])).toThrow(DomainError);
  });
});

describe('retainSamples', () => {
  it('keeps the newest samples, oldest first', () => {
    expect(retainSamples([10, 20, 30], 40, 3)).toEqual([20, 30, 40]);
    expect(retainSamples([], 5, 3)).toEqual([5]);
  });

  it('refuses a negative or non-finite sample and a bad keep', () => {
    expect(() => retainSamples([], -1, 3)).toThrow(DomainError);
    expect(() => retainSamples([], Number.NaN, 3)).toThrow(DomainError);
    expect(() => retainSamples([], 1, 0)).toThrow(DomainError);
  });
});
