import { WebSocket } from 'ws';

export interface SocketBufferLimits {
  /** Messages sent and not yet confirmed read at which the socket overflows (NOTIFY_SOCKET_BUFFER). */
  readonly maxUnread: number;
  /** ws `bufferedAmount` at which the socket overflows (NOTIFY_SOCKET_BUFFER_BYTES). */
  readonly maxBufferedBytes: number;
}

export type OfferResult = 'sent' | 'overflow' | 'closed';

/**
 * One socket's outgoing messages, bounded in messages the client has not read yet.
 *
 * `bufferedAmount` alone cannot see a stalled reader: the kernel's socket buffers take its
 * messages first, about 4 MB (some 20,000 event messages) on localhost before `bufferedAmount`
 * rises at all. So reading is confirmed instead: after every `maxUnread / 4` messages a ping
 * carries the count sent so far, and its pong, which a client sends only after reading
 * everything before the ping (one ordered TCP stream), confirms that many. Browsers and `ws`
 * answer pings by themselves. `bufferedAmount` stays as a byte bound. Live events that do not
 * fit overflow the socket; replays, which the server paces, wait for room instead.
 */
export class SocketBuffer {
  private sent = 0;
  private confirmed = 0;
  private pingedAt = 0;
  /** A pong since the last heartbeat. */
  private answered = true;
  private overflowed = false;
  private readonly pingEvery: number;
  /** Replays waiting for the client to read (see {@link replayRoom}). */
  private waiting: (() => void)[] = [];

  constructor(
    private readonly socket: WebSocket,
    private readonly limits: SocketBufferLimits,
  ) {
    this.pingEvery = Math.max(1, Math.floor(limits.maxUnread / 4));
    socket.on('pong', (data: Buffer) => this.confirm(data));
    socket.on('close', () => this.release());
  }

  /** Messages sent that the client has not confirmed reading. */
  get unread(): number {
    return this.sent - this.confirmed;
  }

  /**
   * Sends `text` if the buffer has room. 'overflow' once it has not (and for every later offer):
   * the caller then sends a resync with {@link sendFinal} and closes the socket.
   */
  offer(text: string): OfferResult {
    if (this.overflowed) return 'overflow';
    if (this.socket.readyState !== WebSocket.OPEN) return 'closed';
    if (
      this.unread >= this.limits.maxUnread ||
      this.socket.bufferedAmount >= this.limits.maxBufferedBytes
    ) {
      this.overflowed = true;
      return 'overflow';
    }
    this.socket.send(text);
    this.sent += 1;
    if (this.sent - this.pingedAt >= this.pingEvery) this.ping();
    return 'sent';
  }

  /**
   * Resolves once a replayed message may be sent: while half the bound is unread, a replay waits
   * for the client to read instead of overflowing it, and leaves the other half to live events.
   */
  replayRoom(): Promise<void> {
    if (this.unread < this.replayBound() || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.resolve();
    }
    if (this.pingedAt < this.sent) this.ping();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Past the bound: the one message (a resync) that precedes closing an overflowed socket. */
  sendFinal(text: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
  }

  /** The heartbeat: false when the client answered no ping since the previous call (it is dead). */
  heartbeat(): boolean {
    if (!this.answered) return false;
    this.answered = false;
    this.ping();
    return true;
  }

  private ping(): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.pingedAt = this.sent;
    this.socket.ping(String(this.sent));
  }

  private confirm(data: Buffer): void {
    this.answered = true;
    const count = Number(data.toString('latin1'));
    // A pong echoes its ping; an unsolicited or mangled one confirms nothing.
    if (Number.isSafeInteger(count) && count > this.confirmed && count <= this.sent) {
      this.confirmed = count;
    }
    if (this.unread < this.replayBound()) this.release();
  }

  private replayBound(): number {
    return Math.max(1, Math.floor(this.limits.maxUnread / 2));
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
