import type { DataSource } from 'typeorm';
import { SessionCache } from './session-cache';
import { SessionStore, type AuthenticatedSession } from './session.store';

const NOW = new Date('2026-12-08T00:00:00Z');
const TOKEN = Buffer.from('token-hash');
const SESSION: AuthenticatedSession = {
  sessionId: 's-1',
  playerId: 'p-1',
  expiresAt: new Date(NOW.getTime() + 3_600_000),
};

/** A database that answers every lookup with SESSION, each only when the test releases it. */
class HeldDatabase {
  lookups = 0;
  private readonly pending: (() => void)[] = [];
  readonly dataSource = {
    query: (sql: string) => {
      if (!sql.startsWith('SELECT l.n')) return Promise.resolve([]);
      this.lookups += 1;
      return new Promise((resolve) =>
        this.pending.push(() =>
          resolve([
            {
              n: '1',
              id: SESSION.sessionId,
              player_id: SESSION.playerId,
              expires_at: SESSION.expiresAt,
            },
          ]),
        ),
      );
    },
  } as unknown as DataSource;

  /** Answers the lookups in flight; resolves once their callers have their answers. */
  async release(): Promise<void> {
    for (const answer of this.pending.splice(0)) answer();
    await new Promise((resolve) => setImmediate(resolve));
  }

  async authenticate(store: SessionStore, at = NOW): Promise<AuthenticatedSession | undefined> {
    const answer = store.authenticate(TOKEN, at);
    await new Promise((resolve) => setImmediate(resolve));
    await this.release();
    return answer;
  }
}

function cachedStore(ttlMs = 60_000, maxEntries = 100) {
  const db = new HeldDatabase();
  const cache = new SessionCache({ ttlMs, maxEntries });
  cache.subscriptionLive();
  return { db, cache, store: new SessionStore(db.dataSource, cache) };
}

describe(SessionCache.name, () => {
  it('answers a looked-up session from memory until the TTL', async () => {
    const { db, store } = cachedStore(60_000);
    expect(await db.authenticate(store)).toEqual(SESSION);
    expect(await db.authenticate(store, new Date(NOW.getTime() + 59_999))).toEqual(SESSION);
    expect(db.lookups).toBe(1);
    await db.authenticate(store, new Date(NOW.getTime() + 60_000));
    expect(db.lookups).toBe(2);
  });

  it('never trusts a session past its own expiry, whatever the TTL', async () => {
    const { db, store } = cachedStore(600_000);
    await db.authenticate(store);
    await db.authenticate(store, SESSION.expiresAt);
    expect(db.lookups).toBe(2);
  });

  it('is off at a TTL of 0: every request looks its session up', async () => {
    const { db, store } = cachedStore(0);
    await db.authenticate(store);
    await db.authenticate(store);
    expect(db.lookups).toBe(2);
  });

  it('evicts a session revoked on this replica or announced by another', async () => {
    const { db, cache, store } = cachedStore();
    await db.authenticate(store);
    await store.revoke(SESSION.sessionId, NOW);
    await db.authenticate(store);
    expect(db.lookups).toBe(2);
    cache.revoked(SESSION.sessionId);
    await db.authenticate(store);
    expect(db.lookups).toBe(3);
  });

  it('keeps no answer of a lookup that was in flight when a revocation arrived', async () => {
    const { db, cache, store } = cachedStore();
    const inFlight = store.authenticate(TOKEN, NOW);
    await new Promise((resolve) => setImmediate(resolve));
    // Another replica signs the session out; its announcement arrives before the stale answer.
    cache.revoked(SESSION.sessionId);
    await db.release();
    expect(await inFlight).toEqual(SESSION);
    await db.authenticate(store);
    expect(db.lookups).toBe(2);
  });

  it('is emptied and bypassed while the revocation subscription is down', async () => {
    const { db, cache, store } = cachedStore();
    await db.authenticate(store);
    cache.subscriptionLost();
    expect(cache.size).toBe(0);
    await db.authenticate(store);
    await db.authenticate(store);
    expect([db.lookups, cache.size]).toEqual([3, 0]);
    cache.subscriptionLive();
    await db.authenticate(store);
    await db.authenticate(store);
    expect(db.lookups).toBe(4);
  });

  it('serves nothing before the subscription is first live', async () => {
    const db = new HeldDatabase();
    const store = new SessionStore(
      db.dataSource,
      new SessionCache({ ttlMs: 60_000, maxEntries: 10 }),
    );
    await db.authenticate(store);
    await db.authenticate(store);
    expect(db.lookups).toBe(2);
  });

  it('keeps at most maxEntries sessions, dropping the least recently used', () => {
    const cache = new SessionCache({ ttlMs: 60_000, maxEntries: 2 });
    cache.subscriptionLive();
    const session = (id: string): AuthenticatedSession => ({ ...SESSION, sessionId: id });
    const hash = (id: string) => Buffer.from(id);
    cache.remember(hash('a'), session('a'), NOW, cache.epoch());
    cache.remember(hash('b'), session('b'), NOW, cache.epoch());
    expect(cache.get(hash('a'), NOW)?.sessionId).toBe('a');
    cache.remember(hash('c'), session('c'), NOW, cache.epoch());
    expect(['a', 'b', 'c'].map((id) => cache.get(hash(id), NOW)?.sessionId)).toEqual([
      'a',
      undefined,
      'c',
    ]);
  });
});
