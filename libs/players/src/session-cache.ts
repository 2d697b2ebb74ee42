import { Inject, Injectable } from '@nestjs/common';
import type { AuthenticatedSession } from './session.store';

export const SESSION_CACHE_OPTIONS = Symbol('SESSION_CACHE_OPTIONS');
export interface SessionCacheOptions {
  /** How long a looked-up session is trusted without PostgreSQL; 0 turns the cache off. */
  readonly ttlMs: number;
  /** Sessions kept at most; the least recently used goes first. */
  readonly maxEntries: number;
}

interface CachedSession {
  readonly session: AuthenticatedSession;
  /** Epoch ms: the TTL or the session's own expiry, whichever comes first. */
  readonly until: number;
}

/**
 * Live sessions by token hash, so a player's requests skip PostgreSQL while the session is known
 * live. Safe only while revocations are heard: it serves nothing until the owner of the
 * revocation subscription says it is live, and is emptied the moment that subscription is lost
 * (announcements made meanwhile are gone). A revocation, heard or made here, evicts at once.
 *
 * The epoch guards the race: a lookup that began before a revocation (or an outage) may carry a
 * stale answer, so its answer is kept only if no revocation arrived while it was in flight.
 */
@Injectable()
export class SessionCache {
  private readonly byToken = new Map<string, CachedSession>();
  private readonly tokenBySession = new Map<string, string>();
  private subscribed = false;
  private currentEpoch = 0;

  constructor(@Inject(SESSION_CACHE_OPTIONS) private readonly options: SessionCacheOptions) {}

  /** Whether lookups may be served from here and answers kept. */
  get active(): boolean {
    return this.subscribed && this.options.ttlMs > 0;
  }

  /** Read before a lookup; hand it back to {@link remember} with the answer. */
  epoch(): number {
    return this.currentEpoch;
  }

  get(tokenHash: Buffer, now: Date): AuthenticatedSession | undefined {
    if (!this.active) return undefined;
    const key = tokenHash.toString('base64');
    const cached = this.byToken.get(key);
    if (!cached) return undefined;
    if (now.getTime() >= cached.until) {
      this.drop(key, cached.session.sessionId);
      return undefined;
    }
    // Least recently used first: a hit moves to the back.
    this.byToken.delete(key);
    this.byToken.set(key, cached);
    return cached.session;
  }

  remember(tokenHash: Buffer, session: AuthenticatedSession, now: Date, epoch: number): void {
    if (!this.active || epoch !== this.currentEpoch) return;
    const key = tokenHash.toString('base64');
    const until = Math.min(now.getTime() + this.options.ttlMs, session.expiresAt.getTime());
    this.byToken.delete(key);
    this.byToken.set(key, { session, until });
    this.tokenBySession.set(session.sessionId, key);
    while (this.byToken.size > this.options.maxEntries) {
      const [oldestKey, oldest] = this.byToken.entries().next().value as [string, CachedSession];
      this.drop(oldestKey, oldest.session.sessionId);
    }
  }

  /** A session was revoked (here, or announced by another replica). */
  revoked(sessionId: string): void {
    this.currentEpoch += 1;
    const key = this.tokenBySession.get(sessionId);
    if (key !== undefined) this.drop(key, sessionId);
  }

  /** The revocation subscription is up: announcements are heard from now on. */
  subscriptionLive(): void {
    this.subscribed = true;
  }

  /** The revocation subscription is down: whatever is cached may have been revoked unheard. */
  subscriptionLost(): void {
    this.subscribed = false;
    this.currentEpoch += 1;
    this.byToken.clear();
    this.tokenBySession.clear();
  }

  get size(): number {
    return this.byToken.size;
  }

  private drop(key: string, sessionId: string): void {
    this.byToken.delete(key);
    this.tokenBySession.delete(sessionId);
  }
}
