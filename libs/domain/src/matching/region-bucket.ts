/** A ticket of a bucket: its age rank, its (group's mean) rating and its players (default 1). */
export interface BucketMember {
  readonly rank: number;
  readonly rating: number;
  readonly players?: number;
}

/** Slot order: rating, then age rank (ranks are distinct, so never 0 for two members). */
function bySlot(a: BucketMember, b: BucketMember): number {
  return a.rating - b.rating || a.rank - b.rank;
}

/** Sentinel for "no active ticket here"; larger than any age rank. */
const NONE = 0x7fffffff;

/** The rating test every part of matching uses, so the index and the checks agree to the bit. */
export function withinRatingWindow(rating: number, anchorRating: number, window: number): boolean {
  return Math.abs(rating - anchorRating) <= window;
}

/**
 * The tickets of one mode that measured one region at or under one RTT ceiling, ordered by
 * rating, in a segment tree of (oldest age rank, active players). A rating window is a contiguous
 * slot range, so "the k oldest unmatched tickets within the window" costs O(k log n) instead of a
 * scan of the pool; matched tickets are switched off in place. An entry may stand for a party:
 * its `players` (default 1) is what {@link count} adds up.
 */
export class RegionBucket {
  private readonly width: number;
  /**
   * Per tree node, side by side at 2 × node: the oldest active age rank under it (NONE if none),
   * then its active players. Side by side, a walk up the tree reads one cache line per level.
   */
  private readonly nodes: Int32Array;
  private readonly ratings: Float64Array;
  private readonly slotOfRank: Int32Array;
  private readonly playersOfSlot: Int32Array;

  /** `members` in any order; ranks must be distinct and below `rankCount`. */
  static of(members: readonly BucketMember[], rankCount: number): RegionBucket {
    return new RegionBucket([...members].sort(bySlot), rankCount);
  }

  /**
   * `members` already in slot order (rating, then rank), taken as they are: a pass sorts its pool
   * once and fills every bucket from that, rather than sorting each bucket again. Throws on
   * members out of that order (an O(n) check).
   */
  static inRatingOrder(members: readonly BucketMember[], rankCount: number): RegionBucket {
    for (let slot = 1; slot < members.length; slot++) {
      if (bySlot(members[slot - 1] as BucketMember, members[slot] as BucketMember) >= 0) {
        throw new Error(`bucket members out of rating order at slot ${slot}`);
      }
    }
    return new RegionBucket(members, rankCount);
  }

  private constructor(sorted: readonly BucketMember[], rankCount: number) {
    let width = 1;
    while (width < sorted.length) width *= 2;
    this.width = width;
    this.nodes = new Int32Array(4 * width);
    for (let node = 0; node < 2 * width; node++) this.nodes[2 * node] = NONE;
    this.ratings = new Float64Array(sorted.length);
    this.slotOfRank = new Int32Array(rankCount).fill(-1);
    this.playersOfSlot = new Int32Array(sorted.length);
    sorted.forEach((member, slot) => {
      this.ratings[slot] = member.rating;
      this.slotOfRank[member.rank] = slot;
      this.playersOfSlot[slot] = member.players ?? 1;
      this.nodes[2 * (width + slot)] = member.rank;
      this.nodes[2 * (width + slot) + 1] = member.players ?? 1;
    });
    for (let node = width - 1; node >= 1; node--) this.pull(node);
  }

  get size(): number {
    return this.ratings.length;
  }

  has(rank: number): boolean {
    return (this.slotOfRank[rank] ?? -1) >= 0;
  }

  /** Slots [lo, hi) of the tickets whose rating is within `window` of `center`. */
  ratingRange(center: number, window: number): readonly [number, number] {
    const tooLow = (rating: number) => rating < center && center - rating > window;
    const tooHigh = (rating: number) => rating > center && rating - center > window;
    return [this.firstSlot((rating) => !tooLow(rating)), this.firstSlot(tooHigh)];
  }

  /** Players of the unmatched tickets in slots [lo, hi). */
  count(lo: number, hi: number): number {
    let total = 0;
    for (let left = lo + this.width, right = hi + this.width; left < right;) {
      if (left & 1) total += this.nodes[2 * left++ + 1] ?? 0;
      if (right & 1) total += this.nodes[2 * --right + 1] ?? 0;
      left >>= 1;
      right >>= 1;
    }
    return total;
  }

  /**
   * The age ranks of the `count` oldest unmatched tickets in slots [lo, hi), oldest first, or
   * fewer if there are not that many. Leaves the bucket as it found it.
   */
  takeOldest(lo: number, hi: number, count: number): number[] {
    const taken: number[] = [];
    while (taken.length < count) {
      const rank = this.oldestIn(lo, hi);
      if (rank === NONE) break;
      taken.push(rank);
      this.setActive(rank, false);
    }
    for (const rank of taken) this.setActive(rank, true);
    return taken;
  }

  /**
   * The age ranks of the unmatched tickets in slots [lo, hi) that `take` accepts, visited oldest
   * first until `done()` or none is left; a ticket `take` refuses (another party size that does
   * not fit, an attribute out of range) is passed over, so the cost grows with how many are
   * refused. Leaves the bucket as it found it.
   */
  takeOldestWhere(
    lo: number,
    hi: number,
    take: (rank: number) => boolean,
    done: () => boolean,
  ): number[] {
    const visited: number[] = [];
    const taken: number[] = [];
    while (!done()) {
      const rank = this.oldestIn(lo, hi);
      if (rank === NONE) break;
      visited.push(rank);
      this.setActive(rank, false);
      if (take(rank)) taken.push(rank);
    }
    for (const rank of visited) this.setActive(rank, true);
    return taken;
  }

  /**
   * As {@link takeOldestWhere}, but once `narrow()` holds (and from then on), visits only the
   * tickets of `narrower`'s slots [lo, hi): a bucket of some of this one's tickets, over the same
   * ratings, holding every ticket `take` would accept from then on. The rest are passed over
   * unvisited. Leaves both buckets as it found them.
   */
  takeOldestWhereNarrowing(
    lo: number,
    hi: number,
    narrower: { readonly bucket: RegionBucket; readonly lo: number; readonly hi: number },
    narrow: () => boolean,
    take: (rank: number) => boolean,
    done: () => boolean,
  ): number[] {
    const visited: number[] = [];
    const taken: number[] = [];
    let narrowed = false;
    while (!done()) {
      narrowed ||= narrow();
      const rank = narrowed
        ? narrower.bucket.oldestIn(narrower.lo, narrower.hi)
        : this.oldestIn(lo, hi);
      if (rank === NONE) break;
      visited.push(rank);
      this.setActive(rank, false);
      narrower.bucket.setActive(rank, false);
      if (take(rank)) taken.push(rank);
    }
    for (const rank of visited) {
      this.setActive(rank, true);
      narrower.bucket.setActive(rank, true);
    }
    return taken;
  }

  /**
   * Switches a ticket on or off; a ticket not in this bucket is ignored. A pass does this for
   * every bucket of every ticket it matches, so the walk up is incremental: the counts move by
   * the ticket's players, and the oldest ranks only as far up as they change.
   */
  setActive(rank: number, active: boolean): void {
    const slot = this.slotOfRank[rank] ?? -1;
    if (slot < 0) return;
    let node = slot + this.width;
    const players = active ? (this.playersOfSlot[slot] ?? 1) : 0;
    const oldestHere = active ? rank : NONE;
    const delta = players - (this.nodes[2 * node + 1] ?? 0);
    if (delta === 0 && this.nodes[2 * node] === oldestHere) return;
    this.nodes[2 * node] = oldestHere;
    this.nodes[2 * node + 1] = players;
    let oldestChanges = true;
    for (node >>= 1; node >= 1; node >>= 1) {
      this.nodes[2 * node + 1] = (this.nodes[2 * node + 1] ?? 0) + delta;
      if (!oldestChanges) continue;
      const oldest = Math.min(this.nodes[4 * node] ?? NONE, this.nodes[4 * node + 2] ?? NONE);
      // Unchanged here, so unchanged above: each node above is the least of this one and others.
      if (this.nodes[2 * node] === oldest) oldestChanges = false;
      else this.nodes[2 * node] = oldest;
    }
  }

  private oldestIn(lo: number, hi: number): number {
    let best = NONE;
    for (let left = lo + this.width, right = hi + this.width; left < right;) {
      if (left & 1) best = Math.min(best, this.nodes[2 * left++] ?? NONE);
      if (right & 1) best = Math.min(best, this.nodes[2 * --right] ?? NONE);
      left >>= 1;
      right >>= 1;
    }
    return best;
  }

  private pull(node: number): void {
    // The children of `node` are 2 × node and 2 × node + 1, so their fields start at 4 × node.
    const { nodes } = this;
    nodes[2 * node] = Math.min(nodes[4 * node] ?? NONE, nodes[4 * node + 2] ?? NONE);
    nodes[2 * node + 1] = (nodes[4 * node + 1] ?? 0) + (nodes[4 * node + 3] ?? 0);
  }

  /** The first slot whose rating satisfies `predicate`, which must hold on a suffix of slots. */
  private firstSlot(predicate: (rating: number) => boolean): number {
    let lo = 0;
    let hi = this.ratings.length;
    while (lo < hi) {
      const middle = (lo + hi) >>> 1;
      if (predicate(this.ratings[middle] ?? 0)) hi = middle;
      else lo = middle + 1;
    }
    return lo;
  }
}
