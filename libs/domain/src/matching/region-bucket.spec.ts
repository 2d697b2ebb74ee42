import { RegionBucket, withinRatingWindow } from './region-bucket';
import { mulberry32 } from '../../../../test/support/seeded-random';

describe(RegionBucket.name, () => {
  it('answers like a scan of the pool while tickets are switched off and on', () => {
    const random = mulberry32(3);
    for (let iteration = 0; iteration < 200; iteration++) {
      const rankCount = 1 + Math.floor(random() * 80);
      const members = Array.from({ length: rankCount }, (_, rank) => ({
        rank,
        rating: Math.round(random() * 40) / 4,
      })).filter(() => random() < 0.7);
      const bucket = RegionBucket.of(members, rankCount);
      const active = new Set(members.map((member) => member.rank));
      expect(bucket.size).toBe(members.length);
      for (let step = 0; step < 30; step++) {
        const rank = Math.floor(random() * rankCount);
        const on = random() < 0.4;
        bucket.setActive(rank, on);
        if (on && members.some((member) => member.rank === rank)) active.add(rank);
        else active.delete(rank);

        const center = Math.round(random() * 40) / 4;
        const window = random() < 0.1 ? Number.POSITIVE_INFINITY : Math.round(random() * 12) / 4;
        const inWindow = members
          .filter((m) => active.has(m.rank) && withinRatingWindow(m.rating, center, window))
          .map((m) => m.rank)
          .sort((a, b) => a - b);
        const [lo, hi] = bucket.ratingRange(center, window);
        const wanted = Math.floor(random() * 6);
        expect(bucket.count(lo, hi)).toBe(inWindow.length);
        expect(bucket.takeOldest(lo, hi, wanted)).toEqual(inWindow.slice(0, wanted));
        // takeOldest leaves the bucket as it was.
        expect(bucket.count(lo, hi)).toBe(inWindow.length);
      }
    }
  });

  it('takes members already in rating order as they are, answering as one built from any order', () => {
    const random = mulberry32(11);
    const members = Array.from({ length: 60 }, (_, rank) => ({
      rank,
      rating: Math.round(random() * 20),
      players: 1 + Math.floor(random() * 3),
    }));
    const shuffled = RegionBucket.of(members, 60);
    const ordered = RegionBucket.inRatingOrder(
      [...members].sort((a, b) => a.rating - b.rating || a.rank - b.rank),
      60,
    );
    for (const [center, window] of [
      [10, 3],
      [0, 0],
      [20, 100],
    ] as const) {
      const range = ordered.ratingRange(center, window);
      expect(range).toEqual(shuffled.ratingRange(center, window));
      expect(ordered.count(...range)).toBe(shuffled.count(...range));
      expect(ordered.takeOldest(...range, 7)).toEqual(shuffled.takeOldest(...range, 7));
    }
  });

  it('refuses members out of rating order rather than answer wrong ranges', () => {
    const members = [
      { rank: 0, rating: 12 },
      { rank: 1, rating: 10 },
    ];
    expect(() => RegionBucket.inRatingOrder(members, 2)).toThrow(/out of rating order at slot 1/);
    // Equal ratings go by rank.
    expect(() =>
      RegionBucket.inRatingOrder(
        [
          { rank: 1, rating: 10 },
          { rank: 0, rating: 10 },
        ],
        2,
      ),
    ).toThrow(/out of rating order/);
    expect(RegionBucket.inRatingOrder([...members].reverse(), 2).size).toBe(2);
  });

  it('works empty', () => {
    const bucket = RegionBucket.of([], 3);
    const [lo, hi] = bucket.ratingRange(1500, 100);
    expect(bucket.count(lo, hi)).toBe(0);
    expect(bucket.takeOldest(lo, hi, 2)).toEqual([]);
    expect(bucket.has(0)).toBe(false);
  });

  it('counts players of parties and takes the oldest that fit, leaving the bucket as it was', () => {
    // Ranks are ages (0 oldest); players 2 and 3 are parties.
    const bucket = RegionBucket.of(
      [
        { rank: 0, rating: 10, players: 3 },
        { rank: 1, rating: 11 },
        { rank: 2, rating: 12, players: 2 },
        { rank: 3, rating: 13 },
      ],
      4,
    );
    expect(bucket.count(0, 4)).toBe(7);
    const players = [3, 1, 2, 1];
    let room = 3;
    const visited: number[] = [];
    const taken = bucket.takeOldestWhere(
      0,
      4,
      (rank) => {
        visited.push(rank);
        const size = players[rank] ?? 1;
        if (size > room || size === 3) return false;
        room -= size;
        return true;
      },
      () => room === 0,
    );
    expect(visited).toEqual([0, 1, 2]);
    expect(taken).toEqual([1, 2]);
    expect(bucket.count(0, 4)).toBe(7);
    bucket.setActive(0, false);
    expect(bucket.count(0, 4)).toBe(4);
  });

  it('visits only the narrower bucket once asked to, and leaves both as it found them', () => {
    const all = Array.from({ length: 8 }, (_, rank) => ({ rank, rating: 10 + rank }));
    const bucket = RegionBucket.of(all, 8);
    const narrower = RegionBucket.of(
      all.filter(({ rank }) => rank % 3 === 2),
      8,
    );
    const visited: number[] = [];
    const taken = bucket.takeOldestWhereNarrowing(
      0,
      8,
      { bucket: narrower, lo: 0, hi: narrower.size },
      () => visited.length >= 2,
      (rank) => {
        visited.push(rank);
        return rank !== 1;
      },
      () => visited.length === 5,
    );
    // Ranks 0 and 1 from the whole bucket, then the narrower's only: 3 and 4 are never visited.
    expect(visited).toEqual([0, 1, 2, 5]);
    expect(taken).toEqual([0, 2, 5]);
    expect(bucket.count(0, 8)).toBe(8);
    expect(narrower.count(0, narrower.size)).toBe(2);
  });
});
