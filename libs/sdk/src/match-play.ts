import type { AssignmentResponse } from '@matchplane/contracts';
import {
  GameCloseCode,
  GameConnection,
  GameConnectionClosedError,
  GameJoinRefusedError,
  type GameConnectionOptions,
  type GameEnded,
  type GameServerMessage,
} from './game-connection';
import { MatchplaneApiError } from './sdk.errors';

export interface MatchPlayOptions extends Omit<GameConnectionOptions, 'onMessage'> {
  /** Every message after `joined`, across reconnects, in order. */
  onMessage?: (message: GameServerMessage) => void;
  /** Called each time the connection dropped and the player is back in the match. */
  onRejoined?: (connection: GameConnection) => void;
  /** Pause between rejoin attempts (ms); default 500. */
  retryDelayMs?: number;
  /** Give up rejoining after this long without a connection (ms); default 120 000. */
  rejoinWindowMs?: number;
}

/** What `MatchPlay.ended` resolves to: the server's `ended`, and how often the player came back. */
export interface MatchPlayResult {
  readonly ended: GameEnded;
  readonly rejoins: number;
}

type AssignmentSource = { assignment(matchId: string): Promise<AssignmentResponse> };

/**
 * A player's play of its match that survives a dropped game connection: when the connection
 * closes before the server's `ended`, it fetches its assignment again (which carries a freshly
 * signed join token once the server reported the leave) and rejoins, to the same team, until
 * the match ends. It stops when the match is over (410 MATCH_ENDED), when the server refuses the
 * player for good (4410: abandoned, past the grace window), or after `rejoinWindowMs`.
 */
export class MatchPlay {
  /** Resolves on the server's `ended`; rejects when the player could not get back in. */
  readonly ended: Promise<MatchPlayResult>;
  private current: GameConnection;
  private stopped = false;
  private rejoins = 0;

  private constructor(
    private readonly client: AssignmentSource,
    private readonly matchId: string,
    first: GameConnection,
    private readonly options: MatchPlayOptions,
  ) {
    this.current = first;
    this.ended = this.run();
    this.ended.catch(() => undefined);
  }

  /** Joins `matchId`'s server with the player's assignment and keeps the player in the match. */
  static async start(
    client: AssignmentSource,
    matchId: string,
    options: MatchPlayOptions = {},
  ): Promise<MatchPlay> {
    const first = await GameConnection.join(await client.assignment(matchId), options);
    return new MatchPlay(client, matchId, first, options);
  }

  /** The connection in use now (a new one after each rejoin). */
  get connection(): GameConnection {
    return this.current;
  }

  /** Drops the game connection as a network loss would (for demos and tests): play goes on. */
  drop(): void {
    this.current.close(4000, 'connection dropped');
  }

  /** Stops playing: closes the connection and rejoins no more. */
  stop(): void {
    this.stopped = true;
    this.current.close();
  }

  private async run(): Promise<MatchPlayResult> {
    for (;;) {
      try {
        return { ended: await this.current.ended, rejoins: this.rejoins };
      } catch (dropped) {
        if (this.stopped || isFinal(dropped)) throw dropped;
        this.current = await this.rejoin();
        this.rejoins += 1;
        this.options.onRejoined?.(this.current);
      }
    }
  }

  private async rejoin(): Promise<GameConnection> {
    const deadline = Date.now() + (this.options.rejoinWindowMs ?? 120_000);
    let last: unknown;
    while (!this.stopped && Date.now() < deadline) {
      try {
        return await GameConnection.join(await this.client.assignment(this.matchId), this.options);
      } catch (error) {
        if (isFinal(error)) throw error;
        last = error;
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 500));
    }
    throw last instanceof Error ? last : new Error(`could not rejoin match ${this.matchId}`);
  }
}

/** The match is over for this player: no point trying again. */
function isFinal(error: unknown): boolean {
  if (error instanceof MatchplaneApiError) return error.status === 410 || error.status === 404;
  // Refused at the door, or admitted and then sent away once the control plane said "abandoned".
  return (
    (error instanceof GameJoinRefusedError || error instanceof GameConnectionClosedError) &&
    error.code === GameCloseCode.JOINING_CLOSED
  );
}
