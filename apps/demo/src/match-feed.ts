export interface FeedEntry {
  readonly matchId: string;
  readonly state: string;
  readonly revision: number;
}

/** The match states one player's notification subscription delivered, awaitable. */
export class MatchFeed {
  private readonly entries: FeedEntry[] = [];
  private readonly waiters: {
    match: (entry: FeedEntry) => boolean;
    resolve: (entry: FeedEntry) => void;
  }[] = [];

  push(entry: FeedEntry): void {
    this.entries.push(entry);
    for (const waiter of [...this.waiters]) {
      if (!waiter.match(entry)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(entry);
    }
  }

  /** The first entry, already delivered or yet to come, that `match` accepts. */
  first(match: (entry: FeedEntry) => boolean): Promise<FeedEntry> {
    const seen = this.entries.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  any(): boolean {
    return this.entries.length > 0;
  }
}
