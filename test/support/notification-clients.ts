import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import WebSocket, { type RawData } from 'ws';
import {
  NOTIFICATIONS_PATH,
  type ClientNotificationMessage,
  type MatchEventMessage,
  type ServerNotificationMessage,
} from '@matchplane/contracts';
import type { MatchCommand } from '@matchplane/domain';
import type { MatchStore, NewParticipant } from '@matchplane/matches';
import { runInTransaction } from '@matchplane/persistence';
import { waitFor } from './processes';

/*
 * Clients and matches for the notification suites. Matches go through the real MatchStore
 * (create + transitionNow), so their events are real outbox rows the real dispatcher delivers.
 */

/** The happy path after creation (revision 1, ALLOCATING): revisions 2 to 5. */
export const MATCH_STEPS: readonly MatchCommand[] = [
  { to: 'PROCESS_READY' },
  { to: 'ASSIGNMENT_READY' },
  { to: 'IN_PROGRESS' },
  { to: 'COMPLETED' },
];

/** The state a match built by {@link MatchDriver} is in at `revision`. */
export const STATE_AT = [
  undefined,
  'ALLOCATING',
  'PROCESS_READY',
  'ASSIGNMENT_READY',
  'IN_PROGRESS',
  'COMPLETED',
] as const;

/** Creates and advances matches of real players through the production store. */
export class MatchDriver {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: MatchStore,
  ) {}

  /**
   * A match of `playerIds` at revision 1. Each participation needs a ticket; they are written
   * finished (COMPLETED) so one player can be in several matches of a test without tripping the
   * one-live-ticket index: the notification path reads no ticket.
   */
  async create(playerIds: readonly string[]): Promise<string> {
    const participants: NewParticipant[] = [];
    for (const [index, playerId] of playerIds.entries()) {
      const [ticket] = await this.dataSource.query<{ id: string }[]>(
        `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, predicted_rtt, finished_at)
         VALUES ($1, 'duel', 'COMPLETED', 1500, now(), now(), '{"eu-west": 20}', now()) RETURNING id`,
        [playerId],
      );
      participants.push({ playerId, ticketId: ticket!.id, team: index % 2, rating: 1500 });
    }
    // The store wakes the relays once the creation commits (transitionNow, once it wrote).
    const { match } = await runInTransaction(this.dataSource, (manager, unit) =>
      this.store.create(unit, { mode: 'duel', region: 'eu-west', participants }),
    );
    return match.id;
  }

  /** The next step of the happy path; returns the new revision. */
  async advance(matchId: string): Promise<number> {
    const current = await this.store.load(undefined, matchId);
    const command = current && MATCH_STEPS[current.revision - 1];
    if (!command) throw new Error(`match ${matchId} has no further step`);
    return (await this.store.transitionNow(matchId, command)).match.revision;
  }
}

/** The ws:// URL of an app listening on a port (in process), or of `baseUrl`. */
export function notificationsUrl(target: INestApplication | string, prefix = 'v1'): string {
  if (typeof target === 'string') {
    return `${target.replace(/^http/, 'ws')}/${prefix}/${NOTIFICATIONS_PATH}`;
  }
  const address = (target.getHttpServer() as { address(): AddressInfo }).address();
  return `ws://127.0.0.1:${address.port}/${prefix}/${NOTIFICATIONS_PATH}`;
}

/** An in-process app on a free port, for the WebSocket tests; returns its http:// base URL. */
export async function listen(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const address = (app.getHttpServer() as { address(): AddressInfo }).address();
  return `http://127.0.0.1:${address.port}`;
}

export interface Closed {
  code: number;
  reason: string;
}

/** A raw protocol client that records every message, for asserting what the server sends. */
export class TestSocket {
  readonly messages: (ServerNotificationMessage & { receivedAt: number })[] = [];
  readonly closed: Promise<Closed>;
  readonly socket: WebSocket;

  constructor(
    url: string,
    options: { token?: string; protocols?: string[]; headers?: Record<string, string> } = {},
  ) {
    const headers = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    this.socket = new WebSocket(url, options.protocols ?? [], { headers });
    this.socket.on('message', (data: RawData) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as ServerNotificationMessage;
      this.messages.push({ ...message, receivedAt: performance.now() });
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.socket.on('close', (code: number, reason: Buffer) =>
        resolve({ code, reason: reason.toString() }),
      ),
    );
  }

  /** Connects and waits for the server's ready message. */
  static async ready(url: string, token: string): Promise<TestSocket> {
    const client = new TestSocket(url, { token });
    await client.waitFor((m) => m.type === 'ready', 'ready');
    return client;
  }

  send(message: ClientNotificationMessage | Record<string, unknown> | string): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  events(matchId?: string): MatchEventMessage[] {
    return this.messages.filter(
      (m): m is MatchEventMessage & { receivedAt: number } =>
        m.type === 'event' && (matchId === undefined || m.matchId === matchId),
    );
  }

  revisions(matchId: string): number[] {
    return this.events(matchId).map((event) => event.revision);
  }

  async waitFor(
    predicate: (message: ServerNotificationMessage) => boolean,
    what: string,
    timeoutMs = 15_000,
  ): Promise<ServerNotificationMessage> {
    return waitFor(() => Promise.resolve(this.messages.find(predicate)), {
      timeoutMs,
      intervalMs: 10,
      what,
    });
  }

  /** Resolves once `matchId` has been sent up to `revision`. */
  async waitForRevision(matchId: string, revision: number, timeoutMs = 15_000): Promise<void> {
    await this.waitFor(
      (m) => m.type === 'event' && m.matchId === matchId && m.revision === revision,
      `r${revision} of ${matchId}`,
      timeoutMs,
    );
  }

  close(): void {
    this.socket.close();
  }
}
