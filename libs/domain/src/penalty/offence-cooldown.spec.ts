import {
  offencesInForce,
  recordOffence,
  type OffencePolicy,
  type OffenceRecord,
} from './offence-cooldown';

const NONE: OffenceRecord = { count: 0 };

const policy: OffencePolicy = { baseMs: 60_000, capMs: 3_600_000, decayMs: 86_400_000 };
const t0 = new Date('2026-12-06T10:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('offence cooldown', () => {
  it('runs base for a first offence and doubles with each offence still in force, up to the cap', () => {
    let record: OffenceRecord = NONE;
    const lengths: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const next = recordOffence(record, at(i * 1_000), policy);
      lengths.push(next.cooldownUntil.getTime() - at(i * 1_000).getTime());
      record = next.record;
    }
    expect(lengths).toEqual([60, 120, 240, 480, 960, 1_920, 3_600, 3_600].map((s) => s * 1_000));
  });

  it('forgives one offence per whole decay period without a new one', () => {
    const three = { count: 3, lastAt: t0 };
    expect(offencesInForce(three, at(86_400_000 - 1), policy)).toBe(3);
    expect(offencesInForce(three, at(86_400_000), policy)).toBe(2);
    expect(offencesInForce(three, at(3 * 86_400_000), policy)).toBe(0);
    expect(offencesInForce(three, at(30 * 86_400_000), policy)).toBe(0);
    // Two days after the third offence, the next one costs base * 2^1.
    const next = recordOffence(three, at(2 * 86_400_000), policy);
    expect(next.record.count).toBe(2);
    expect(next.cooldownUntil.getTime() - at(2 * 86_400_000).getTime()).toBe(120_000);
    // Offences recorded before decay existed (no time) count in full.
    expect(offencesInForce({ count: 2 }, at(30 * 86_400_000), policy)).toBe(2);
    // Without decay, nothing is forgiven.
    expect(offencesInForce(three, at(30 * 86_400_000), { ...policy, decayMs: 0 })).toBe(3);
  });

  it('never shortens a cooldown already in force', () => {
    const longer = at(10 * 3_600_000);
    expect(recordOffence(NONE, t0, policy, longer).cooldownUntil).toEqual(longer);
    expect(recordOffence(NONE, t0, policy, at(1_000)).cooldownUntil).toEqual(at(60_000));
  });
});
