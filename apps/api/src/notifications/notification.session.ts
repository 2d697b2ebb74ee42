import type { Logger } from '@nestjs/common';
import type { WebSocket } from 'ws';
import {
  NotificationCloseCode,
  NotificationErrorCode,
  ResyncReason,
  type ErrorMessage,
  type MatchEventMessage,
  type ResyncMessage,
  type ServerNotificationMessage,
} from '@matchplane/contracts';
import type { MatchReplayReader } from './match-replay.reader';
import type { SocketBuffer } from './socket-buffer';

/** A live match event as the fan-out hands it to every recipient: serialized once. */
export interface LiveEvent {
  readonly matchId: string;
  readonly revision: number;
  readonly state: string;
  readonly text: string;
}

interface MatchCursor {
  /** The last revision sent (while replaying: the revision the replay continues from). */
  sent: number;
  /** Present while history is being replayed: live events held back, merged in by revision after. */
  held?: LiveEvent[];
  /** A resume during the replay asked to go back to this revision: the replay reads again. */
  rewind?: number;
  /** Opened by the server (`discover`), not asked for by the client. */
  discovered?: true;
  /**
   * The client named a discovered match in a resume, from a revision beyond what was sent: the
   * replay starts again from there (from 0 it would meet a resync once rows are purged).
   */
  restartAt?: number;
}

/** How often one replay re-reads history for a live event it still cannot place (a lost publish). */
const MAX_REPLAY_READS = 3;
/** How long an overflowed client gets to read its resync and close frame before it is cut off. */
const SLOW_CONSUMER_GRACE_MS = 5_000;

/**
 * One authenticated socket: per match, the last revision sent. Live events go out in revision
 * order; a repeat (at-least-once delivery) is dropped, and a gap (a lost publish, or a match this
 * socket has not been sent before) is filled from history first. A resume replays history while
 * holding live events back, then merges them in, so the client sees every revision once.
 */
export class NotificationSession {
  private readonly cursors = new Map<string, MatchCursor>();
  /** Replays run one at a time, in the order they were asked for. */
  private replays: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    readonly playerId: string,
    private readonly socket: WebSocket,
    private readonly buffer: SocketBuffer,
    private readonly reader: MatchReplayReader,
    private readonly logger: Logger,
    private readonly onSlowConsumer: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a protocol message outside any match stream (ready, error). */
  notify(message: ServerNotificationMessage): void {
    if (this.closed) return;
    if (this.buffer.offer(JSON.stringify(message)) === 'overflow') this.slowConsumer();
  }

  live(event: LiveEvent): void {
    if (this.closed) return;
    const cursor = this.cursors.get(event.matchId);
    if (cursor?.held) {
      cursor.held.push(event);
      return;
    }
    const last = cursor?.sent ?? 0;
    if (event.revision <= last) return;
    if (event.revision > last + 1) {
      this.replay(event.matchId, last, [event]);
      return;
    }
    if (this.send(event.text, event.matchId, event.revision, event.state)) {
      if (cursor) cursor.sent = event.revision;
      else this.cursors.set(event.matchId, { sent: event.revision });
    }
  }

  /** The client has seen each match up to the given revision: replay the rest, then go on live. */
  resume(matches: Readonly<Record<string, number>>): void {
    for (const [matchId, after] of Object.entries(matches)) this.replay(matchId, after, []);
  }

  /** Fills every match this socket follows from history (after the fan-out may have lost publishes). */
  catchUp(): void {
    for (const [matchId, cursor] of this.cursors) {
      if (!cursor.held) this.replay(matchId, cursor.sent, []);
    }
  }

  /** A match of this player whose events may have been lost: sent from revision 1 if new here. */
  discover(matchId: string): void {
    if (!this.closed && !this.cursors.has(matchId)) this.replay(matchId, 0, [], true);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
  }

  /** The socket is gone: stop replays from writing to it. */
  closedByPeer(): void {
    this.closed = true;
  }

  private replay(matchId: string, after: number, held: LiveEvent[], discovered = false): void {
    const existing = this.cursors.get(matchId);
    if (existing?.held) {
      // A replay of this match is queued or running: it reads again if asked for older history.
      existing.held.push(...held);
      if (after < existing.sent) existing.rewind = Math.min(existing.rewind ?? after, after);
      else if (existing.discovered && !discovered && after > existing.sent)
        existing.restartAt = after;
      if (!discovered) delete existing.discovered;
      return;
    }
    const cursor: MatchCursor = {
      sent: after,
      held: [...held],
      ...(discovered ? { discovered } : {}),
    };
    this.cursors.set(matchId, cursor);
    this.replays = this.replays.then(() =>
      this.runReplay(matchId, cursor).catch((error: unknown) => {
        this.logger.warn(
          `replay of match ${matchId} for player ${this.playerId} failed: ${(error as Error).message}`,
        );
        this.close(NotificationCloseCode.SERVER_ERROR, 'replay failed; reconnect and resume');
      }),
    );
  }

  private async runReplay(matchId: string, cursor: MatchCursor): Promise<void> {
    for (let misses = 0; ;) {
      if (this.closed) return;
      if (cursor.restartAt !== undefined) {
        cursor.sent = cursor.restartAt;
        delete cursor.restartAt;
      }
      if (cursor.rewind !== undefined) {
        cursor.sent = Math.min(cursor.sent, cursor.rewind);
        delete cursor.rewind;
      }
      const replay = await this.reader.after(this.playerId, matchId, cursor.sent);
      if (this.closed) return;
      if (cursor.rewind !== undefined || cursor.restartAt !== undefined) continue;
      if (!replay) {
        this.cursors.delete(matchId);
        const error: ErrorMessage = {
          type: 'error',
          code: NotificationErrorCode.MATCH_NOT_FOUND,
          message: 'No such match, or this player is not part of it',
          matchId,
        };
        this.notify(error);
        return;
      }
      for (const message of replay.messages) {
        await this.buffer.replayRoom();
        if (!this.sendReplayed(cursor, message)) return;
      }
      if (cursor.rewind !== undefined || cursor.restartAt !== undefined) continue;
      const held = (cursor.held ?? []).sort((a, b) => a.revision - b.revision);
      let placed = 0;
      for (const event of held) {
        if (event.revision > cursor.sent + 1) break;
        placed += 1;
        if (event.revision <= cursor.sent) continue;
        if (!this.send(event.text, matchId, event.revision, event.state)) return;
        cursor.sent = event.revision;
      }
      const rest = held.slice(placed);
      if (rest.length === 0) {
        delete cursor.held;
        return;
      }
      // A live event beyond what history held: its predecessor's publish was lost on the way.
      cursor.held = rest;
      misses += 1;
      if (misses >= MAX_REPLAY_READS) throw new Error(`revision ${cursor.sent + 1} never arrived`);
    }
  }

  private sendReplayed(cursor: MatchCursor, message: MatchEventMessage | ResyncMessage): boolean {
    if (message.type === 'event' && message.revision !== cursor.sent + 1) return true;
    if (message.type === 'resync' && message.revision < cursor.sent) return true;
    const sent = this.send(
      JSON.stringify(message),
      message.matchId,
      message.revision,
      message.state,
    );
    if (sent) cursor.sent = message.revision;
    return sent;
  }

  /** False when the socket is closed or overflowed (it is then being closed as a slow consumer). */
  private send(text: string, matchId: string, revision: number, state: string): boolean {
    if (this.closed) return false;
    const result = this.buffer.offer(text);
    if (result === 'sent') return true;
    if (result === 'overflow') this.slowConsumer({ matchId, revision, state });
    return false;
  }

  /** `at`: the match event that did not fit, sent as a resync to its state instead. */
  private slowConsumer(at?: { matchId: string; revision: number; state: string }): void {
    if (this.closed) return;
    if (at) {
      const resync: ResyncMessage = { type: 'resync', ...at, reason: ResyncReason.BUFFER_OVERFLOW };
      this.buffer.sendFinal(JSON.stringify(resync));
    }
    this.close(NotificationCloseCode.SLOW_CONSUMER, 'slow consumer; reconnect and resume');
    this.onSlowConsumer();
    // A client that reads nothing never answers the close handshake either.
    setTimeout(() => this.socket.terminate(), SLOW_CONSUMER_GRACE_MS).unref();
  }
}
