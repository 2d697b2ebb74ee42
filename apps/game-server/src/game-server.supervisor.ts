import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { GameServerConfig } from './game-server.config';
import {
  JoinCloseCode,
  SERVER_PROTOCOL_VERSION,
  type MatchResultRequest,
  type RosterResponse,
} from '@matchplane/contracts';
import { isMatchState, isTerminalMatchState } from '@matchplane/domain';
import { JoinTokenVerifier, KeySet } from '@matchplane/join-auth';
import { ServerClient, type ServerHeartbeatHandle } from '@matchplane/sdk';
import { describeError as describe, isTransient, isUnavailable } from './api-failures';
import { BackfillRunner, shortTeams } from './backfill.runner';
import { ControlPlanePresenceReporter } from './presence.reporter';
import { JoinListener } from './join.listener';
import { MatchRunner, sleep } from './match.runner';
import { RosterGate } from './roster.gate';

/** How the process ends (apps/game-server/README.md "Exit codes"). */
export const GameServerExitCode = {
  /** The result is recorded, or the control plane ended the match before it was played. */
  DONE: 0,
  /** Unusable key file, or the API refused or could not be reached at a step. */
  FAILED: 1,
  /** The roster failed verification; the server never registered. */
  ROSTER_REJECTED: 2,
} as const;
export type GameServerExitCode = (typeof GameServerExitCode)[keyof typeof GameServerExitCode];

/** The match a provider launched this server for: GameServerConfig with every match variable set. */
interface Assignment {
  serverId: string;
  credential: string;
  matchId: string;
  joinKeysFile: string;
  port: number;
}

const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 2_000;

/**
 * The dedicated server's one run: fetch and verify the roster, register, accept players until
 * everyone is in or the connect deadline passes, report initial-connect, play (backfilling the
 * teams no-shows left short meanwhile), report the result, exit. A roster that fails
 * verification ends the run before registering, so the match fails by the control plane's
 * registration timeout rather than running with the wrong players.
 */
@Injectable()
export class GameServerSupervisor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(GameServerSupervisor.name);
  private readonly shutdown = new AbortController();
  private settle: (code: GameServerExitCode | undefined) => void = () => undefined;
  private running: Promise<void> | undefined;

  /**
   * The exit code once the run is over; undefined when a shutdown signal ended it (Nest then
   * exits with the signal). Never settles on a standby server.
   */
  readonly finished = new Promise<GameServerExitCode | undefined>((resolve) => {
    this.settle = resolve;
  });

  constructor(@Inject(GameServerConfig) private readonly config: GameServerConfig) {}

  onApplicationBootstrap(): void {
    const assignment = this.assignment();
    if (assignment === undefined) {
      this.logger.warn(
        'no match assigned (MATCHPLANE_SERVER_ID and the other match variables are unset): serving health only',
      );
      return;
    }
    this.running = this.run(assignment).then(
      (code) => this.settle(this.shutdown.signal.aborted ? undefined : code),
      (error: unknown) => {
        this.logger.error(`game server run failed unexpectedly: ${describe(error)}`);
        this.settle(this.shutdown.signal.aborted ? undefined : GameServerExitCode.FAILED);
      },
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shutdown.abort();
    await this.running;
  }

  private async run(assignment: Assignment): Promise<GameServerExitCode | undefined> {
    const { serverId, matchId } = assignment;
    // The control plane ended the match (a heartbeat refused: ALLOCATION_ENDED, e.g. SERVER_LOST).
    const ended = new AbortController();
    const signal = AbortSignal.any([this.shutdown.signal, ended.signal]);
    this.logger.log(
      `server ${serverId} for match ${matchId}: API ${this.config.MATCHPLANE_API_URL}, players on port ${assignment.port}`,
    );

    let keys: KeySet;
    try {
      keys = KeySet.loadFile(assignment.joinKeysFile);
    } catch (error) {
      this.logger.error(`join keys unusable: ${describe(error)}; exiting without registering`);
      return GameServerExitCode.FAILED;
    }
    const gate = new RosterGate(new JoinTokenVerifier(keys), { serverId, matchId });
    const client = new ServerClient({
      baseUrl: this.config.MATCHPLANE_API_URL,
      serverId,
      credential: assignment.credential,
      requestTimeoutMs: 5_000,
      retries: { retries: 3, baseDelayMs: 250, maxDelayMs: 2_000 },
    });
    this.logger.log(
      `join keys loaded (key ids ${JSON.stringify(keys.ids())}); fetching the roster`,
    );

    let published: RosterResponse;
    try {
      published = await this.fetchRoster(client, signal);
    } catch (error) {
      if (signal.aborted) return undefined;
      this.logger.error(
        `could not fetch the roster: ${describe(error)}; exiting without registering`,
      );
      return GameServerExitCode.FAILED;
    }
    const check = gate.check(published, Date.now());
    if (!check.ok) {
      this.logger.error(
        `roster rejected (${check.reason}): ${check.message}; not registering, exiting with code ${GameServerExitCode.ROSTER_REJECTED} (the control plane fails the match when registration times out)`,
      );
      return GameServerExitCode.ROSTER_REJECTED;
    }
    const roster = check.roster;
    this.logger.log(
      `roster verified: ${roster.players.size} players on teams ${JSON.stringify(roster.teams)}, manifest key ${JSON.stringify(roster.keyId)}`,
    );

    const players = new JoinListener(gate, roster, {
      host: this.config.HEALTH_HOST,
      port: assignment.port,
      handshakeTimeoutMs: this.config.JOIN_HANDSHAKE_TIMEOUT_MS,
      presence: new ControlPlanePresenceReporter(client),
    });
    let step = 'listen for players';
    let registered = false;
    let heartbeats: ServerHeartbeatHandle | undefined;
    const interrupted = () => this.abandon(client, registered, players, ended.signal.aborted);
    try {
      const address = await players.listen();
      this.logger.log(`accepting players on ws://${address.address}:${address.port}/join`);

      // Beating from before registration: once registered, silence fails the match SERVER_LOST.
      heartbeats = this.startHeartbeats(client, () => {
        // A refusal after the result was sent is that result's release, not the match taken away.
        if (step !== 'report the result') ended.abort();
      });
      // Listening first: registering tells the control plane players may connect now.
      step = 'register';
      const registration = await this.report(
        'registration',
        () => client.register(SERVER_PROTOCOL_VERSION, this.config.GAME_SERVER_IMAGE_DIGEST),
        signal,
      );
      registered = true;
      this.logger.log(
        `registered: match ${registration.state} (revision ${registration.revision})`,
      );
      if (isOver(registration.state)) {
        this.logger.warn(`match is already ${registration.state}; exiting without playing`);
        return GameServerExitCode.DONE;
      }

      step = 'wait for players';
      const everyone = await Promise.race([
        players.everyoneConnected().then(() => true),
        sleep(this.config.CONNECT_DEADLINE_MS, signal).then(() => false),
      ]);
      if (signal.aborted) return await interrupted();
      players.closeJoining();
      const connected = players.connectedPlayerIds();
      this.logger.log(
        `${everyone ? 'every player connected' : `connect deadline (${this.config.CONNECT_DEADLINE_MS} ms) passed`}: reporting initial-connect with ${connected.length}/${roster.players.size} players`,
      );

      step = 'report initial-connect';
      const initial = await this.report(
        'initial-connect',
        () => client.initialConnect(connected),
        signal,
      );
      this.logger.log(
        `initial-connect recorded: match ${initial.state}, no-shows ${JSON.stringify(initial.noShowPlayerIds)}`,
      );
      if (isOver(initial.state)) {
        this.logger.warn(`match ${initial.state} at initial-connect; exiting without playing`);
        await players.closeAll(JoinCloseCode.NORMAL, `match ${initial.state}`, {
          type: 'ended',
          outcome: 'FAILED',
        });
        return GameServerExitCode.DONE;
      }

      step = 'play';
      const backfilling = new AbortController();
      const stopBackfilling = () => backfilling.abort();
      signal.addEventListener('abort', stopBackfilling, { once: true });
      const backfill = this.backfill(client, gate, players, connected, backfilling.signal);
      let result: MatchResultRequest | undefined;
      try {
        result = await new MatchRunner(players, {
          durationMs: this.config.MATCH_DURATION_MS,
          tickIntervalMs: this.config.MATCH_TICK_INTERVAL_MS,
        }).play(signal);
      } finally {
        // The match is over (or interrupted): a backfill still under way is withdrawn first.
        signal.removeEventListener('abort', stopBackfilling);
        backfilling.abort();
        await backfill;
      }
      if (result === undefined) return await interrupted();
      this.logger.log(
        `match over: ${result.outcome}, winning team ${result.winningTeam ?? 'none'}; reporting the result`,
      );

      step = 'report the result';
      const recorded = await this.report('result', () => client.result(result), signal);
      this.logger.log(
        'alreadyRecorded' in recorded
          ? 'result recorded by an earlier attempt whose answer was lost (the control plane has released this server)'
          : `result recorded: match ${recorded.state} (revision ${recorded.revision})`,
      );
      await players.closeAll(JoinCloseCode.NORMAL, 'match ended', {
        type: 'ended',
        outcome: result.outcome,
        ...(result.winningTeam !== undefined ? { winningTeam: result.winningTeam } : {}),
      });
      this.logger.log('match finished; exiting');
      return GameServerExitCode.DONE;
    } catch (error) {
      if (signal.aborted) return await interrupted();
      this.logger.error(`could not ${step}: ${describe(error)}; exiting`);
      await players.closeAll(JoinCloseCode.SERVER_ERROR, `could not ${step}`);
      return GameServerExitCode.FAILED;
    } finally {
      heartbeats?.stop();
      await players.close();
    }
  }

  private startHeartbeats(client: ServerClient, onEnded: () => void): ServerHeartbeatHandle {
    const intervalMs = GameServerConfig.heartbeatIntervalMs(this.config);
    const heartbeats = client.startHeartbeats({
      intervalMs,
      onError: (error) => this.logger.warn(`heartbeat not taken: ${describe(error)}`),
    });
    void heartbeats.done.then((stop) => {
      if (stop.reason !== 'ended') return;
      this.logger.warn('heartbeat refused (ALLOCATION_ENDED): the control plane ended the match');
      onEnded();
    });
    this.logger.log(`heartbeating every ${intervalMs} ms`);
    return heartbeats;
  }

  /**
   * When initial-connect left teams short and BACKFILL_ON_NO_SHOW is on, fills their open slots
   * while the match plays (BackfillRunner); resolves once every request has ended, which `signal`
   * (the match ending) hastens. Never rejects.
   */
  private backfill(
    client: ServerClient,
    gate: RosterGate,
    players: JoinListener,
    connected: readonly string[],
    signal: AbortSignal,
  ): Promise<void> {
    const short = shortTeams(players.currentRoster(), connected);
    if (short.length === 0) return Promise.resolve();
    const described = short.map(({ team, slots }) => `team ${team} short ${slots}`).join(', ');
    if (!this.config.BACKFILL_ON_NO_SHOW) {
      this.logger.log(`${described}; BACKFILL_ON_NO_SHOW is off: playing on short-handed`);
      return Promise.resolve();
    }
    this.logger.log(`${described}: requesting backfill while the match plays`);
    return new BackfillRunner(client, gate, players, {
      timeoutSeconds: this.config.BACKFILL_TIMEOUT_SECONDS,
      pollMs: this.config.BACKFILL_POLL_MS,
      connectDeadlineMs: this.config.CONNECT_DEADLINE_MS,
    })
      .run(short, signal)
      .catch((error: unknown) => {
        this.logger.error(`backfill failed unexpectedly: ${describe(error)}`);
      });
  }

  /** Retries until the roster is served or ROSTER_WAIT_MS has passed; only transient failures are retried. */
  private fetchRoster(client: ServerClient, signal: AbortSignal): Promise<RosterResponse> {
    return this.persist('roster', () => client.roster(), {
      waitMs: this.config.ROSTER_WAIT_MS,
      retryable: isTransient,
      signal,
    });
  }

  /**
   * A report that changes the match (register, initial-connect, result), retried while the
   * control plane cannot take it (unreachable, 5xx, 429) for up to REPORT_WAIT_MS. Each is
   * idempotent on the control plane's side. Without this a report outlived only the SDK's few
   * retries (about 2 s): a PostgreSQL restart then left a played match IN_PROGRESS until the
   * reconciler's lifecycle timeout (found by the chaos run).
   */
  private report<T>(what: string, call: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.persist(what, call, {
      waitMs: this.config.REPORT_WAIT_MS,
      retryable: isUnavailable,
      signal,
    });
  }

  private async persist<T>(
    what: string,
    call: () => Promise<T>,
    options: { waitMs: number; retryable: (error: unknown) => boolean; signal: AbortSignal },
  ): Promise<T> {
    const deadline = Date.now() + options.waitMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await call();
      } catch (error) {
        const delayMs = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
        if (!options.retryable(error) || Date.now() + delayMs > deadline) throw error;
        this.logger.warn(
          `${what} not taken (${describe(error)}); retry ${attempt} in ${delayMs} ms`,
        );
        if (!(await sleep(delayMs, options.signal))) throw error;
      }
    }
  }

  /**
   * The control plane ended the match (`matchEnded`): the players are told, nothing is reported.
   * A shutdown signal interrupted it: tell the control plane it failed (best effort, one short
   * attempt) so it need not wait for a timeout. Sockets are closed by the caller's finally.
   */
  private async abandon(
    client: ServerClient,
    registered: boolean,
    players: JoinListener,
    matchEnded: boolean,
  ): Promise<GameServerExitCode | undefined> {
    const over = { type: 'ended', outcome: 'FAILED' } as const;
    if (matchEnded) {
      await players.closeAll(JoinCloseCode.NORMAL, 'match ended', over);
      return GameServerExitCode.DONE;
    }
    if (!registered) return undefined;
    this.logger.warn('shutting down before the match ended; reporting it FAILED');
    try {
      await client.result({ outcome: 'FAILED' });
    } catch (error) {
      this.logger.warn(`could not report the failure: ${describe(error)}`);
    }
    return undefined;
  }

  private assignment(): Assignment | undefined {
    const c = this.config;
    if (!GameServerConfig.matchAssigned(c)) return undefined;
    // The config refuses a partial assignment, so every variable is set here.
    if (
      c.MATCHPLANE_SERVER_ID === undefined ||
      c.MATCHPLANE_SERVER_CREDENTIAL === undefined ||
      c.MATCHPLANE_MATCH_ID === undefined ||
      c.MATCHPLANE_JOIN_KEYS_FILE === undefined ||
      c.MATCHPLANE_SERVER_PORT === undefined
    ) {
      throw new Error('GameServerConfig holds a partial match assignment');
    }
    return {
      serverId: c.MATCHPLANE_SERVER_ID,
      credential: c.MATCHPLANE_SERVER_CREDENTIAL,
      matchId: c.MATCHPLANE_MATCH_ID,
      joinKeysFile: c.MATCHPLANE_JOIN_KEYS_FILE,
      port: c.MATCHPLANE_SERVER_PORT,
    };
  }
}

function isOver(state: string): boolean {
  return isMatchState(state) && isTerminalMatchState(state);
}
