import {
  JOIN_PATH,
  JoinCloseCode,
  type AssignmentResponse,
  type JoinServerMessage,
} from '@matchplane/contracts';
import { defaultWebSocket, type SdkSocket, type WebSocketConnector } from './web-socket';

/*
 * The player's side of the game server's join protocol (apps/game-server/README.md "Join
 * protocol"): a WebSocket at `ws://<endpoint>/join` whose first message is
 * `{"type":"join","token"}`. The token travels in a message, never in the URL, so it does not end
 * up in access logs. Messages and close codes are the ones libs/contracts join-protocol.ts
 * defines for the server too; the SDK's names for them follow.
 */

/** The path players connect to on a game server's endpoint. */
export const GAME_JOIN_PATH = JOIN_PATH;

/** Close codes of a game server connection (README "Join protocol"). */
export const GameCloseCode = JoinCloseCode;
export type GameCloseCode = JoinCloseCode;

/** Server -> client messages of the join protocol. */
export type GameServerMessage = JoinServerMessage;

export type GameJoinedMessage = Extract<GameServerMessage, { type: 'joined' }>;

/** How the match ended, from the server's `ended` message. */
export interface GameEnded {
  readonly outcome: 'COMPLETED' | 'FAILED';
  /** Only for COMPLETED. */
  readonly winningTeam?: number;
}

/** How the connection closed. */
export interface GameClosed {
  readonly code: number;
  readonly reason: string;
}

/** What `joinMatch` needs of an assignment (an AssignmentResponse fits). */
export type GameAssignment = Pick<AssignmentResponse, 'endpoint' | 'joinToken'> &
  Partial<Pick<AssignmentResponse, 'matchId'>>;

export interface GameConnectionOptions {
  /** `ws` (default) or `wss`, for a server behind TLS. */
  scheme?: 'ws' | 'wss';
  /** How long connecting and the join handshake may take together (ms). Default 10_000. */
  joinTimeoutMs?: number;
  /** Called with every message after `joined` (started, ticks, ended), in order. Its throws are ignored. */
  onMessage?: (message: GameServerMessage) => void;
  /** How the socket is opened. Default: the installed connector (see `installWebSocket`), else the platform's WebSocket. */
  webSocket?: WebSocketConnector;
}

/**
 * The game server closed the connection instead of admitting the player (4401 invalid token,
 * 4403 not on the roster, 4410 joining closed, ...), or before `joined` for another reason.
 */
export class GameJoinRefusedError extends Error {
  override name = 'GameJoinRefusedError';

  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`game server refused the join (${code})${reason ? `: ${reason}` : ''}`);
  }
}

/** The server could not be reached, or did not admit the player within `joinTimeoutMs`. */
export class GameConnectError extends Error {
  override name = 'GameConnectError';

  constructor(
    readonly url: string,
    readonly timedOut: boolean,
    cause?: unknown,
  ) {
    super(
      `${timedOut ? 'no join answer in time from' : 'could not connect to'} ${url}` +
        (cause instanceof Error ? `: ${cause.message}` : ''),
      { cause },
    );
  }
}

/** The connection closed before the server sent `ended` (server shut down, network, or `close()`). */
export class GameConnectionClosedError extends Error {
  override name = 'GameConnectionClosedError';

  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`game connection closed (${code}) before the match ended${reason ? `: ${reason}` : ''}`);
  }
}

const DEFAULT_JOIN_TIMEOUT_MS = 10_000;

/**
 * A joined player's connection to its match's game server. Open one with `GameConnection.join`
 * (or `PlayerClient.joinMatch`): it resolves once the server answered `joined`, and rejects with
 * GameJoinRefusedError (the close code and reason) or GameConnectError otherwise.
 */
export class GameConnection {
  /** The joined message's player and team. */
  readonly playerId: string;
  readonly team: number;
  /** Every message after `joined` so far, in order (started, ticks, ended). */
  readonly messages: GameServerMessage[] = [];
  /** Resolves on the server's `ended`; rejects with GameConnectionClosedError if the connection closes first. */
  readonly ended: Promise<GameEnded>;
  /** Resolves (never rejects) once the connection has closed, with its code and reason. */
  readonly closed: Promise<GameClosed>;

  private resolveEnded!: (ended: GameEnded) => void;
  private rejectEnded!: (error: Error) => void;
  private hasEnded = false;

  private constructor(
    private readonly socket: SdkSocket,
    joined: GameJoinedMessage,
    closed: Promise<GameClosed>,
    private readonly onMessage: ((message: GameServerMessage) => void) | undefined,
  ) {
    this.playerId = joined.playerId;
    this.team = joined.team;
    this.closed = closed;
    this.ended = new Promise<GameEnded>((resolve, reject) => {
      this.resolveEnded = resolve;
      this.rejectEnded = reject;
    });
    // A caller that only awaits `closed` (or nothing) must not see an unhandled rejection.
    this.ended.catch(() => undefined);
    void closed.then(({ code, reason }) => {
      if (!this.hasEnded) this.rejectEnded(new GameConnectionClosedError(code, reason));
    });
  }

  /** `ws://<endpoint>/join` (or wss). */
  static url(endpoint: string, scheme: 'ws' | 'wss' = 'ws'): string {
    return `${scheme}://${endpoint}${GAME_JOIN_PATH}`;
  }

  /** Connects to the assignment's server, sends the join message and waits for `joined`. */
  static join(
    assignment: GameAssignment,
    options: GameConnectionOptions = {},
  ): Promise<GameConnection> {
    const url = GameConnection.url(assignment.endpoint, options.scheme);
    const timeoutMs = options.joinTimeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS;
    const connector = options.webSocket ?? defaultWebSocket();
    // Set synchronously on `joined`, so every later message (even one in the same read) reaches it.
    let connection: GameConnection | undefined;
    let reportClosed!: (closed: GameClosed) => void;
    const closed = new Promise<GameClosed>((resolve) => (reportClosed = resolve));

    return new Promise<GameConnection>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.terminate();
        reject(error);
      };
      const socket = connector.connect(
        { url },
        {
          open: () => socket.send(JSON.stringify({ type: 'join', token: assignment.joinToken })),
          message: (text) => {
            if (connection) return connection.receive(text);
            if (settled) return;
            const message = parse(text);
            if (message?.type !== 'joined') return; // nothing else is sent before joined
            settled = true;
            clearTimeout(timer);
            const joined = new GameConnection(socket, message, closed, options.onMessage);
            connection = joined;
            resolve(joined);
          },
          ping: () => undefined,
          // Before the join: a failed connection. After it, `close` follows and settles `ended`.
          error: (error) => {
            if (!settled) fail(new GameConnectError(url, false, error));
          },
          close: (code, reason) => reportClosed({ code, reason }),
        },
      );
      const timer = setTimeout(() => fail(new GameConnectError(url, true)), timeoutMs);
      void closed.then(({ code, reason }) => {
        if (!settled) fail(new GameJoinRefusedError(code, reason));
      });
    });
  }

  /** The ticks received so far. */
  ticks(): Extract<GameServerMessage, { type: 'tick' }>[] {
    return this.messages.filter(
      (message): message is Extract<GameServerMessage, { type: 'tick' }> => message.type === 'tick',
    );
  }

  /** Leaves the match (the server keeps a player who drops out during play out). Idempotent. */
  close(code = 1000, reason = 'client closed'): void {
    this.socket.close(code, reason);
  }

  private receive(text: string): void {
    const message = parse(text);
    if (!message) return;
    this.messages.push(message);
    if (message.type === 'ended' && !this.hasEnded) {
      this.hasEnded = true;
      this.resolveEnded({
        outcome: message.outcome,
        ...(message.winningTeam === undefined ? {} : { winningTeam: message.winningTeam }),
      });
    }
    try {
      this.onMessage?.(message);
    } catch {
      // A throwing listener must not break the connection or the order of what follows.
    }
  }
}

function parse(text: string): GameServerMessage | undefined {
  try {
    const message = JSON.parse(text) as unknown;
    if (typeof message !== 'object' || message === null) return undefined;
    return typeof (message as { type?: unknown }).type === 'string'
      ? (message as GameServerMessage)
      : undefined;
  } catch {
    return undefined;
  }
}
