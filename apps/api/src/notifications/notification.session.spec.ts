import type { Logger } from '@nestjs/common';
import { WebSocket } from 'ws';
import type {
  MatchEventMessage,
  MatchEventsResponse,
  ServerNotificationMessage,
} from '@matchplane/contracts';
import type { MatchReplayReader } from './match-replay.reader';
import { NotificationSession, type LiveEvent } from './notification.session';
import { SocketBuffer } from './socket-buffer';

const MATCH = '7d0e3b0c-8f1e-4c55-9a51-0b7f0a3c1d2e';
const PLAYER = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

/** The part of a ws socket the session and its buffer use; pongs on demand. */
class FakeSocket {
  readyState: number = WebSocket.OPEN;
  bufferedAmount = 0;
  readonly sent: ServerNotificationMessage[] = [];
  closedWith: number | undefined;
  autoPong = true;
  private pongListener: ((data: Buffer) => void) | undefined;

  on(event: string, listener: (data: Buffer) => void): this {
    if (event === 'pong') this.pongListener = listener;
    return this;
  }

  send(text: string): void {
    this.sent.push(JSON.parse(text) as ServerNotificationMessage);
  }

  private lastPing = '';

  ping(data: string): void {
    this.lastPing = data;
    if (this.autoPong) this.pong();
  }

  /** The client reads everything so far and answers the last ping. */
  pong(): void {
    this.pongListener?.(Buffer.from(this.lastPing));
  }

  close(code: number): void {
    this.closedWith = code;
    this.readyState = WebSocket.CLOSING;
  }

  terminate(): void {
    this.readyState = WebSocket.CLOSED;
  }

  revisions(): number[] {
    return this.sent.flatMap((m) => (m.type === 'event' ? [m.revision] : []));
  }
}

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

function live(revision: number): LiveEvent {
  const message = event(revision);
  return { matchId: MATCH, revision, state: message.state, text: JSON.stringify(message) };
}

function history(...revisions: number[]): MatchEventsResponse {
  const last = revisions[revisions.length - 1] ?? 0;
  return { matchId: MATCH, state: `S${last}`, revision: last, messages: revisions.map(event) };
}

/** A reader whose answers the test hands out one read at a time. */
class ScriptedReader {
  readonly reads: number[] = [];
  private readonly waiting: ((answer: MatchEventsResponse | Error) => void)[] = [];

  after(_playerId: string, _matchId: string, after: number): Promise<MatchEventsResponse> {
    this.reads.push(after);
    return new Promise((resolve, reject) =>
      this.waiting.push((answer) => (answer instanceof Error ? reject(answer) : resolve(answer))),
    );
  }

  async answer(response: MatchEventsResponse | Error): Promise<void> {
    const next = this.waiting.shift();
    if (!next) throw new Error('no read is waiting');
    next(response);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function session(maxUnread = 64) {
  const socket = new FakeSocket();
  const reader = new ScriptedReader();
  const buffer = new SocketBuffer(socket as unknown as WebSocket, {
    maxUnread,
    maxBufferedBytes: 1 << 20,
  });
  const logger = { warn: () => undefined } as unknown as Logger;
  const slow = jest.fn();
  const subject = new NotificationSession(
    PLAYER,
    socket as unknown as WebSocket,
    buffer,
    reader as unknown as MatchReplayReader,
    logger,
    slow,
  );
  return { socket, reader, subject, slow };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(NotificationSession.name, () => {
  it('holds live events that arrive during a replay and merges them in by revision, once each', async () => {
    const { socket, reader, subject } = session();
    subject.resume({ [MATCH]: 2 });
    await settle();
    expect(reader.reads).toEqual([2]);
    // Live events overtaking the replay, out of order and overlapping it.
    subject.live(live(4));
    subject.live(live(3));
    subject.live(live(5));
    expect(socket.revisions()).toEqual([]);
    await reader.answer(history(3, 4));
    expect(socket.revisions()).toEqual([3, 4, 5]);
    subject.live(live(5));
    subject.live(live(6));
    expect(socket.revisions()).toEqual([3, 4, 5, 6]);
  });

  it('drops a repeated live event and fills a gap from history before going on', async () => {
    const { socket, reader, subject } = session();
    subject.live(live(1));
    subject.live(live(1));
    subject.live(live(3));
    await settle();
    expect(reader.reads).toEqual([1]);
    await reader.answer(history(2, 3));
    expect(socket.revisions()).toEqual([1, 2, 3]);
  });

  it('starts a match it has not sent before at revision 1', async () => {
    const { socket, reader, subject } = session();
    subject.live(live(3));
    await settle();
    expect(reader.reads).toEqual([0]);
    await reader.answer(history(1, 2, 3));
    expect(socket.revisions()).toEqual([1, 2, 3]);
  });

  it('reads again when a held event is still beyond what history had', async () => {
    const { socket, reader, subject } = session();
    subject.resume({ [MATCH]: 1 });
    await settle();
    subject.live(live(4));
    await reader.answer(history(2));
    expect(reader.reads).toEqual([1, 2]);
    await reader.answer(history(3, 4));
    expect(socket.revisions()).toEqual([2, 3, 4]);
  });

  it('reads again from an older revision a resume asks for while a replay runs', async () => {
    const { socket, reader, subject } = session();
    subject.resume({ [MATCH]: 3 });
    await settle();
    subject.resume({ [MATCH]: 1 });
    await reader.answer(history(4));
    expect(reader.reads).toEqual([3, 1]);
    await reader.answer(history(2, 3, 4));
    expect(socket.revisions()).toEqual([2, 3, 4]);
  });

  it('goes on from a resync to the current state', async () => {
    const { socket, reader, subject } = session();
    subject.resume({ [MATCH]: 0 });
    await settle();
    subject.live(live(3));
    subject.live(live(4));
    await reader.answer({
      matchId: MATCH,
      state: 'S3',
      revision: 3,
      messages: [
        { type: 'resync', matchId: MATCH, state: 'S3', revision: 3, reason: 'RETENTION_EXPIRED' },
      ],
    });
    expect(socket.sent.map((m) => m.type)).toEqual(['resync', 'event']);
    expect(socket.revisions()).toEqual([4]);
  });

  it('sends a resync and closes with 4008 once the client stops confirming what it read', () => {
    const { socket, subject, slow } = session(4);
    socket.autoPong = false;
    for (let revision = 1; revision <= 6; revision += 1) subject.live(live(revision));
    expect(socket.revisions()).toEqual([1, 2, 3, 4]);
    expect(socket.sent[4]).toEqual({
      type: 'resync',
      matchId: MATCH,
      state: 'S5',
      revision: 5,
      reason: 'BUFFER_OVERFLOW',
    });
    expect(socket.sent).toHaveLength(5);
    expect(socket.closedWith).toBe(4008);
    expect(slow).toHaveBeenCalledTimes(1);
  });

  it("paces a long replay on the client's reading instead of overflowing it", async () => {
    const { socket, reader, subject } = session(4);
    socket.autoPong = false;
    subject.resume({ [MATCH]: 0 });
    await settle();
    await reader.answer(history(1, 2, 3, 4, 5, 6));
    // Half the bound may be unread by a replay; the rest is kept for live events.
    expect(socket.revisions()).toEqual([1, 2]);
    subject.live(live(7));
    for (let read = 0; read < 4; read += 1) {
      socket.pong();
      await settle();
    }
    expect(socket.revisions()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(socket.closedWith).toBeUndefined();
  });

  it('never overflows a client that keeps confirming', () => {
    const { socket, subject } = session(4);
    for (let revision = 1; revision <= 50; revision += 1) subject.live(live(revision));
    expect(socket.revisions()).toHaveLength(50);
    expect(socket.closedWith).toBeUndefined();
  });

  it('closes with 1011 when history cannot be read, so the client resumes elsewhere', async () => {
    const { socket, reader, subject } = session();
    subject.resume({ [MATCH]: 0 });
    await settle();
    await reader.answer(new Error('database down'));
    expect(socket.closedWith).toBe(1011);
  });
});
