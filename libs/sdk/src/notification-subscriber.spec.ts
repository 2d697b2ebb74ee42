import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type {
  ClientNotificationMessage,
  MatchEventMessage,
  ResyncMessage,
  ServerNotificationMessage,
} from '@matchplane/contracts';
import {
  NotificationSubscriber,
  type NotificationConnectionEvent,
  type NotificationHandlers,
} from './notification-subscriber';

const MATCH = '7d0e3b0c-8f1e-4c55-9a51-0b7f0a3c1d2e';
const TOKEN = `mps_${'t'.repeat(43)}`;

interface Connection {
  socket: WebSocket;
  request: IncomingMessage;
  received: ClientNotificationMessage[];
}

/** A scripted stand-in for the API's socket: the test says what the server sends. */
class ScriptedServer {
  readonly connections: Connection[] = [];
  private readonly server: WebSocketServer;
  private waiters: (() => void)[] = [];

  private constructor(server: WebSocketServer) {
    this.server = server;
    server.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      const connection: Connection = { socket, request, received: [] };
      socket.on('message', (data) => {
        connection.received.push(
          JSON.parse((data as Buffer).toString('utf8')) as ClientNotificationMessage,
        );
        this.notify();
      });
      this.connections.push(connection);
      this.notify();
    });
  }

  static start(): Promise<ScriptedServer> {
    return new Promise((resolve) => {
      const server: WebSocketServer = new WebSocketServer({ port: 0, host: '127.0.0.1' }, () =>
        resolve(new ScriptedServer(server)),
      );
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `predicate` holds (re-checked on every connection and client message). */
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async connection(index: number): Promise<Connection> {
    await this.until(() => this.connections.length > index);
    return this.connections[index]!;
  }

  send(connection: Connection, ...messages: ServerNotificationMessage[]): void {
    for (const message of messages) connection.socket.send(JSON.stringify(message));
  }

  close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

const ready: ServerNotificationMessage = {
  type: 'ready',
  playerId: 'p',
  bufferLimit: 256,
  heartbeatIntervalMs: 30_000,
};

function event(revision: number): MatchEventMessage {
  return {
    type: 'event',
    event: 'match.state_changed',
    matchId: MATCH,
    revision,
    state: `S${revision}`,
    occurredAt: new Date(0).toISOString(),
  };
}

function recorder() {
  const events: number[] = [];
  const resyncs: ResyncMessage[] = [];
  const connections: NotificationConnectionEvent[] = [];
  const errors: unknown[] = [];
  const handlers: NotificationHandlers = {
    onEvent: (e) => events.push(e.revision),
    onResync: (r) => resyncs.push(r),
    onConnection: (c) => connections.push(c),
    onError: (e) => errors.push(e),
  };
  return { events, resyncs, connections, errors, handlers };
}

const eventually = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe(NotificationSubscriber.name, () => {
  let server: ScriptedServer;

  beforeEach(async () => {
    server = await ScriptedServer.start();
  });

  afterEach(async () => {
    await server.close();
  });

  const subscribe = (handlers: NotificationHandlers, lastSeen?: Record<string, number>) =>
    new NotificationSubscriber({
      baseUrl: server.baseUrl,
      token: () => TOKEN,
      reconnect: { baseDelayMs: 10, maxDelayMs: 50 },
      ...(lastSeen ? { lastSeen } : {}),
    }).subscribe(handlers);

  it('connects to /v1/notifications with the bearer token and resumes from the revisions it was given', async () => {
    const subscription = subscribe(recorder().handlers, { [MATCH]: 3 });
    const connection = await server.connection(0);
    expect(connection.request.url).toBe('/v1/notifications');
    expect(connection.request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    await server.until(() => connection.received.length > 0);
    expect(connection.received).toEqual([{ type: 'resume', matches: { [MATCH]: 3 } }]);
    server.send(connection, ready);
    await subscription.ready;
    subscription.close();
    expect(await subscription.done).toEqual({ reason: 'closed' });
  });

  it('delivers each revision once, in order, holding back what follows a gap until the server fills it', async () => {
    const record = recorder();
    const subscription = subscribe(record.handlers);
    const connection = await server.connection(0);
    server.send(connection, ready, event(1), event(1), event(3), event(4));
    await server.until(() => connection.received.length > 0);
    // The gap after r1 is asked for once.
    expect(connection.received).toEqual([{ type: 'resume', matches: { [MATCH]: 1 } }]);
    expect(record.events).toEqual([1]);
    server.send(connection, event(2), event(3), event(4), event(5));
    await eventually(() => record.events.length === 5);
    expect(record.events).toEqual([1, 2, 3, 4, 5]);
    expect(subscription.lastSeen()).toEqual({ [MATCH]: 5 });
    subscription.close();
  });

  it('surfaces a resync and goes on from its revision', async () => {
    const record = recorder();
    const subscription = subscribe(record.handlers, { [MATCH]: 1 });
    const connection = await server.connection(0);
    const resync: ResyncMessage = {
      type: 'resync',
      matchId: MATCH,
      state: 'S4',
      revision: 4,
      reason: 'RETENTION_EXPIRED',
    };
    server.send(connection, ready, resync, event(4), event(5));
    await eventually(() => record.events.length === 1);
    expect(record.resyncs).toEqual([resync]);
    expect(record.events).toEqual([5]);
    subscription.close();
  });

  it('moves to the next replica when its replica dies, resuming from the last revision it delivered', async () => {
    const other = await ScriptedServer.start();
    const record = recorder();
    const subscription = new NotificationSubscriber({
      baseUrl: [server.baseUrl, other.baseUrl],
      token: () => TOKEN,
      reconnect: { baseDelayMs: 10, maxDelayMs: 50 },
    }).subscribe(record.handlers);
    try {
      const first = await server.connection(0);
      server.send(first, ready, event(1), event(2));
      await eventually(() => record.events.length === 2);

      await server.close(); // the replica is gone: its socket drops and it refuses connections

      await eventually(() => other.connections.length > 0);
      const onOther = await other.connection(0);
      await other.until(() => onOther.received.length > 0);
      expect(onOther.received).toEqual([{ type: 'resume', matches: { [MATCH]: 2 } }]);
      expect(onOther.request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      other.send(onOther, ready, event(3));
      await eventually(() => record.events.length === 3);
      expect(record.events).toEqual([1, 2, 3]);
      expect(server.connections).toHaveLength(1);
    } finally {
      subscription.close();
      await other.close();
    }
  });

  it('reconnects with backoff after a drop and resumes from the last revision it delivered', async () => {
    const record = recorder();
    const subscription = subscribe(record.handlers);
    const first = await server.connection(0);
    server.send(first, ready, event(1), event(2));
    await eventually(() => record.events.length === 2);
    first.socket.close(1001, 'going away');
    const second = await server.connection(1);
    await server.until(() => second.received.length > 0);
    expect(second.received).toEqual([{ type: 'resume', matches: { [MATCH]: 2 } }]);
    server.send(second, ready, event(2), event(3));
    await eventually(() => record.events.length === 3);
    expect(record.events).toEqual([1, 2, 3]);
    expect(record.connections).toEqual([
      { state: 'connected', playerId: 'p' },
      { state: 'reconnecting', code: 1001, reason: 'going away', delayMs: expect.any(Number) },
      { state: 'connected', playerId: 'p' },
    ]);
    subscription.close();
  });

  it('does not skip past events on a buffer-overflow resync: it reconnects and resumes from what it delivered', async () => {
    const record = recorder();
    const subscription = subscribe(record.handlers);
    const first = await server.connection(0);
    server.send(first, ready, event(1), {
      type: 'resync',
      matchId: MATCH,
      state: 'S5',
      revision: 5,
      reason: 'BUFFER_OVERFLOW',
    });
    await eventually(() => record.events.length === 1);
    first.socket.close(4008, 'slow consumer');
    const second = await server.connection(1);
    await server.until(() => second.received.length > 0);
    expect(second.received).toEqual([{ type: 'resume', matches: { [MATCH]: 1 } }]);
    server.send(second, ready, event(2), event(3), event(4), event(5));
    await eventually(() => record.events.length === 5);
    expect(record.resyncs).toEqual([]);
    subscription.close();
  });

  it('ends as unauthenticated on close code 4401, without reconnecting', async () => {
    const subscription = subscribe(recorder().handlers);
    const connection = await server.connection(0);
    connection.socket.close(4401, 'invalid, expired or revoked session');
    expect(await subscription.done).toEqual({
      reason: 'unauthenticated',
      message: 'invalid, expired or revoked session',
    });
    await expect(subscription.ready).rejects.toThrow(/ended before it was ready/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.connections).toHaveLength(1);
  });

  it('keeps delivering in order when a handler throws, and reports the error', async () => {
    const record = recorder();
    const subscription = subscribe({
      ...record.handlers,
      onEvent: (e) => {
        record.events.push(e.revision);
        if (e.revision === 1) throw new Error('handler bug');
      },
    });
    const connection = await server.connection(0);
    server.send(connection, ready, event(1), event(2));
    await eventually(() => record.events.length === 2);
    expect(record.events).toEqual([1, 2]);
    expect(record.errors).toEqual([new Error('handler bug')]);
    subscription.close();
  });

  it('reconnects when the server falls silent for 2.5 heartbeat intervals', async () => {
    const record = recorder();
    const subscription = subscribe(record.handlers);
    const first = await server.connection(0);
    // A half-open connection: the server says nothing more, not even a ping.
    server.send(first, { ...ready, heartbeatIntervalMs: 20 });
    await server.connection(1);
    expect(record.connections[1]).toMatchObject({ state: 'reconnecting', code: 1006 });
    subscription.close();
  });

  it('follows a match it learns of from its whole history', async () => {
    const subscription = subscribe(recorder().handlers);
    const connection = await server.connection(0);
    server.send(connection, ready);
    await subscription.ready;
    subscription.follow(MATCH);
    await server.until(() => connection.received.length > 0);
    expect(connection.received).toEqual([{ type: 'resume', matches: { [MATCH]: 0 } }]);
    subscription.close();
  });
});
