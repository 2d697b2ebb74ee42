import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import {
  JOIN_PATH,
  JoinCloseCode,
  type JoinServerMessage as ServerMessage,
} from '@matchplane/contracts';
import { parseJoinMessage } from './join.protocol';
import type { RosterGate, RosterPlayer, VerifiedRoster } from './roster.gate';

export interface JoinListenerOptions {
  host: string;
  port: number;
  handshakeTimeoutMs: number;
  /** Told when a joined player's connection drops and when the player is back (the control plane). */
  presence?: PresenceReporter;
}

/** Where a joined player's leaves and rejoins are reported; `rejoined` false: the player abandoned. */
export interface PresenceReporter {
  left(playerId: string): void;
  rejoined(playerId: string): Promise<boolean>;
}

// A join message is a token (at most 1024 characters) in a small JSON object.
const MAX_MESSAGE_BYTES = 4_096;
// How long closing waits for clients to answer the close handshake before dropping them.
const CLOSE_GRACE_MS = 1_000;

/**
 * Accepts players over WebSocket at /join: the first message must be the join message, whose
 * token is verified offline by the roster gate; one open connection per player. Keeps the set of
 * connected players for initial-connect and the match. Once joining has closed, only the players
 * a backfill's roster revision added may still join, while their window is open, and a player who
 * joined before and dropped may rejoin (to the same team: the roster's) with any valid token of its
 * own, e.g. the fresh one its assignment serves; the control plane decides whether it is too late.
 */
export class JoinListener {
  private readonly logger = new Logger(JoinListener.name);
  private readonly server: Server;
  private readonly sockets: WebSocketServer;
  private readonly connections = new Map<string, WebSocket>();
  private joining = true;
  private waiters: { playerIds: readonly string[]; wake: () => void }[] = [];
  private roster: VerifiedRoster;
  /** Every player of every roster revision taken, by id: who the match's result counts. */
  private readonly everyone: Map<string, RosterPlayer>;
  /** Players a backfill added who may join after joining has closed. */
  private readonly latecomers = new Set<string>();
  /** Players who joined at least once: they may come back after joining closed. */
  private readonly joinedOnce = new Set<string>();
  /** Set by closeAll: connections closed from here on are not leaves. */
  private closing = false;
  /** When the match started and for how long, for the `started` a latecomer is sent. */
  private match: { startedAt: number; durationMs: number } | undefined;

  constructor(
    private readonly gate: RosterGate,
    roster: VerifiedRoster,
    private readonly options: JoinListenerOptions,
  ) {
    this.roster = roster;
    this.everyone = new Map(roster.players);
    this.server = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
      res.end(`connect with a WebSocket to ${JOIN_PATH}\n`);
    });
    this.sockets = new WebSocketServer({
      server: this.server,
      path: JOIN_PATH,
      maxPayload: MAX_MESSAGE_BYTES,
    });
    this.sockets.on('connection', (socket) => this.handshake(socket));
    // Errors of the underlying server surface through listen(); a socket's own through its handler.
    this.sockets.on('error', () => undefined);
  }

  async listen(): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  /** Players with an open connection, sorted. */
  connectedPlayerIds(): string[] {
    return [...this.connections.keys()].sort();
  }

  connectedPlayers(): RosterPlayer[] {
    return this.connectedPlayerIds().flatMap((id) => this.everyone.get(id) ?? []);
  }

  /** The newest roster revision taken: who may join. */
  currentRoster(): VerifiedRoster {
    return this.roster;
  }

  /**
   * The current roster widened to every player of every revision taken (a later revision drops
   * the no-shows), so the result scores everyone who was on the match.
   */
  playedRoster(): VerifiedRoster {
    const players = new Map(this.everyone);
    const teams = [...new Set([...players.values()].map((player) => player.team))];
    return { ...this.roster, players, teams: teams.sort((a, b) => a - b) };
  }

  /** Resolves once every rostered player has an open connection. */
  everyoneConnected(): Promise<void> {
    return this.connected([...this.roster.players.keys()]);
  }

  /** Resolves once each of `playerIds` has an open connection. */
  connected(playerIds: readonly string[]): Promise<void> {
    if (playerIds.every((id) => this.connections.has(id))) return Promise.resolve();
    return new Promise((wake) => this.waiters.push({ playerIds, wake }));
  }

  /**
   * Takes a later roster revision (RosterGate.checkRevision passed it) and opens joining to the
   * players it added, even after joining has closed, until closeLateJoining.
   */
  takeRevision(roster: VerifiedRoster, added: readonly RosterPlayer[]): void {
    this.roster = roster;
    for (const player of added) {
      this.everyone.set(player.playerId, player);
      this.latecomers.add(player.playerId);
    }
  }

  /** Ends the join window of these added players; one not connected by now is refused with 4410. */
  closeLateJoining(playerIds: readonly string[]): void {
    for (const id of playerIds) this.latecomers.delete(id);
  }

  /** The match started now for `durationMs`: a player joining later is sent `started` with what is left. */
  markStarted(durationMs: number): void {
    this.match = { startedAt: Date.now(), durationMs };
  }

  /** From now on every new connection is refused with 4410. */
  closeJoining(): void {
    this.joining = false;
  }

  send(playerId: string, message: ServerMessage): boolean {
    const socket = this.connections.get(playerId);
    if (socket?.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  broadcast(message: ServerMessage): void {
    for (const playerId of this.connections.keys()) this.send(playerId, message);
  }

  /**
   * Closes every connection (joined or still handshaking) with `code`, sending `final` first to
   * joined players, and waits briefly for the close handshakes.
   */
  async closeAll(code: JoinCloseCode, reason: string, final?: ServerMessage): Promise<void> {
    this.joining = false;
    this.closing = true;
    this.latecomers.clear();
    if (final !== undefined) this.broadcast(final);
    const closing = [...this.sockets.clients].map((socket) => closeAndWait(socket, code, reason));
    await Promise.all(closing);
  }

  /** Stops listening; connections still open are told the server is going away. */
  async close(): Promise<void> {
    await this.closeAll(JoinCloseCode.GOING_AWAY, 'server shutting down');
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handshake(socket: WebSocket): void {
    socket.on('error', (error) => this.logger.warn(`player connection error: ${error.message}`));
    const timer = setTimeout(
      () => refuse(socket, JoinCloseCode.JOIN_TIMEOUT, 'no join message in time'),
      this.options.handshakeTimeoutMs,
    );
    socket.once('close', () => clearTimeout(timer));
    socket.once('message', (data, isBinary) => {
      clearTimeout(timer);
      this.admit(socket, data, isBinary);
    });
  }

  private admit(socket: WebSocket, data: RawData, isBinary: boolean): void {
    if (!this.joining && this.latecomers.size === 0 && this.joinedOnce.size === 0) {
      this.logger.warn('join refused (4410): joining is closed');
      return refuse(socket, JoinCloseCode.JOINING_CLOSED, 'joining is closed');
    }
    const message = isBinary ? undefined : parseJoinMessage(rawText(data));
    if (message === undefined) {
      this.logger.warn('join refused (4400): first message is not a join message');
      return refuse(
        socket,
        JoinCloseCode.BAD_JOIN_MESSAGE,
        'expected {"type":"join","token":"..."}',
      );
    }
    const admission = this.gate.admit(this.roster, message.token, Date.now());
    // Once joining closed only a rejoin can get in: anyone else is told it is closed, as before.
    if (!this.joining && this.latecomers.size === 0 && !admission.ok) {
      this.logger.warn('join refused (4410): joining is closed');
      return refuse(socket, JoinCloseCode.JOINING_CLOSED, 'joining is closed');
    }
    if (!admission.ok) {
      if (admission.refusal === 'INVALID_TOKEN') {
        this.logger.warn(`join refused (4401): invalid join token (${admission.reason})`);
        return refuse(
          socket,
          JoinCloseCode.INVALID_TOKEN,
          `invalid join token: ${admission.reason}`,
        );
      }
      this.logger.warn(`join refused (4403): player ${admission.playerId} is not on the roster`);
      return refuse(socket, JoinCloseCode.NOT_ON_ROSTER, 'player is not on the roster');
    }

    const { playerId, team } = admission.player;
    const late = !this.joining;
    const rejoin = this.joinedOnce.has(playerId);
    if (late && !this.latecomers.has(playerId) && !rejoin) {
      this.logger.warn(`join refused (4410): joining is closed to player ${playerId}`);
      return refuse(socket, JoinCloseCode.JOINING_CLOSED, 'joining is closed');
    }
    if (this.connections.has(playerId)) {
      this.logger.warn(`join refused (4409): player ${playerId} is already connected`);
      return refuse(socket, JoinCloseCode.DUPLICATE, 'player is already connected');
    }
    this.connections.set(playerId, socket);
    this.joinedOnce.add(playerId);
    socket.once('close', (code) => {
      if (this.connections.get(playerId) !== socket) return;
      this.connections.delete(playerId);
      this.logger.log(`player ${playerId} disconnected (${code})`);
      // A drop while the match runs is a leave; one before it started is initial-connect's.
      if (!this.closing && this.match !== undefined) this.options.presence?.left(playerId);
    });
    if (rejoin && this.match !== undefined) this.reportRejoin(playerId, socket);
    this.send(playerId, { type: 'joined', playerId, team });
    if (this.match !== undefined) {
      const remainingMs = this.match.durationMs - (Date.now() - this.match.startedAt);
      this.send(playerId, { type: 'started', durationMs: Math.max(0, remainingMs) });
    }
    this.logger.log(
      `player ${playerId} ${rejoin ? 'rejoined' : 'joined'} on team ${team}${late && !rejoin ? ' (backfill)' : ''} (${this.connections.size}/${this.roster.players.size} connected)`,
    );
    const [ready, waiting] = partition(this.waiters, (waiter) =>
      waiter.playerIds.every((id) => this.connections.has(id)),
    );
    this.waiters = waiting;
    for (const waiter of ready) waiter.wake();
  }

  private reportRejoin(playerId: string, socket: WebSocket): void {
    const reporter = this.options.presence;
    if (!reporter) return;
    reporter.rejoined(playerId).then((accepted) => {
      if (accepted || this.connections.get(playerId) !== socket) return;
      this.logger.warn(`player ${playerId} abandoned the match: rejoin refused (4410)`);
      this.connections.delete(playerId);
      refuse(socket, JoinCloseCode.JOINING_CLOSED, 'too late to rejoin: abandoned');
    }, noop);
  }
}

// The reporter logs its own failures.
function noop(): void {}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

function refuse(socket: WebSocket, code: JoinCloseCode, reason: string): void {
  if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
    socket.close(code, reason);
  }
}

function closeAndWait(socket: WebSocket, code: JoinCloseCode, reason: string): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.terminate(); // the peer never answered the close frame
      resolve();
    }, CLOSE_GRACE_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    refuse(socket, code, reason);
  });
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}
