import type {
  BackfillConnectResponse,
  BackfillRequestBody,
  BackfillResponse,
  RosterResponse,
} from '@matchplane/contracts';
import { JoinTokenSigner, JoinTokenVerifier } from '@matchplane/join-auth';
import type { ServerClient } from '@matchplane/sdk';
import { BackfillRunner, shortTeams } from './backfill.runner';
import {
  newRosterRevision,
  newSignedRoster,
  newTestKeys,
  newVerifiedRoster,
} from './game-server.factories';
import { JoinListener } from './join.listener';
import { RosterGate, type VerifiedRoster } from './roster.gate';

const [A, B, C, D] = [1, 2, 3, 4].map((n) => `${n}`.repeat(8) + '-1111-4111-8111-111111111111');

function twoVersusTwo(): VerifiedRoster {
  return newVerifiedRoster([
    [A!, 0],
    [B!, 0],
    [C!, 1],
    [D!, 1],
  ]);
}

describe(BackfillRunner.name, () => {
  describe(shortTeams.name, () => {
    it('names each team with fewer players connected than rostered, and how many it lacks', () => {
      expect(shortTeams(twoVersusTwo(), [A!, C!, D!])).toEqual([{ team: 0, slots: 1 }]);
      expect(shortTeams(twoVersusTwo(), [C!])).toEqual([
        { team: 0, slots: 2 },
        { team: 1, slots: 1 },
      ]);
    });

    it('finds none when everyone connected', () => {
      expect(shortTeams(twoVersusTwo(), [A!, B!, C!, D!])).toEqual([]);
    });
  });

  describe('run', () => {
    const SERVER_ID = 'gs-unit-backfill';
    const { keys } = newTestKeys('k1');
    const signer = new JoinTokenSigner(keys, 'k1');

    /**
     * The backfill routes over a script: each team's request is PUBLISHED at its first poll, with
     * `published[team]`'s players and revision; the roster route serves `newest`.
     */
    class ScriptedControlPlane {
      readonly calls: string[] = [];
      private readonly requests = new Map<string, BackfillResponse>();

      constructor(
        private readonly newest: RosterResponse,
        private readonly published: Record<number, { playerIds: string[]; revision: number }>,
      ) {}

      asClient(): ServerClient {
        return this as unknown as ServerClient;
      }

      requestBackfill(body: BackfillRequestBody): Promise<BackfillResponse> {
        const request: BackfillResponse = {
          requestId: `request-of-team-${body.team}`,
          matchId: this.newest.matchId,
          team: body.team,
          slots: body.slots,
          state: 'OPEN',
          expiresAt: new Date(Date.now() + 30_000).toISOString(),
          playerIds: [],
          revision: 1,
        };
        return Promise.resolve(this.record(`request team ${body.team}`, request));
      }

      backfill(requestId: string): Promise<BackfillResponse> {
        const request = this.requests.get(requestId)!;
        const { playerIds, revision } = this.published[request.team]!;
        return Promise.resolve(
          this.record(`poll ${requestId}`, {
            ...request,
            state: 'PUBLISHED',
            playerIds,
            rosterRevision: revision,
          }),
        );
      }

      roster(): Promise<RosterResponse> {
        this.calls.push('roster');
        return Promise.resolve(this.newest);
      }

      acceptBackfill(requestId: string, rosterRevision: number): Promise<BackfillResponse> {
        const request = this.requests.get(requestId)!;
        const state = rosterRevision === request.rosterRevision ? 'ASSIGNED' : 'PUBLISHED';
        return Promise.resolve(
          this.record(`accept ${requestId} revision ${rosterRevision}`, { ...request, state }),
        );
      }

      reportBackfillConnect(
        requestId: string,
        connectedPlayerIds: readonly string[],
      ): Promise<BackfillConnectResponse> {
        const request = this.requests.get(requestId)!;
        const filled = this.record(`connect ${requestId} ${connectedPlayerIds.length}`, {
          ...request,
          state: 'FILLED',
        });
        return Promise.resolve({ ...filled, noShowPlayerIds: request.playerIds });
      }

      cancelBackfill(requestId: string): Promise<BackfillResponse> {
        const request = this.requests.get(requestId)!;
        return Promise.resolve(
          this.record(`cancel ${requestId}`, { ...request, state: 'CANCELLED' }),
        );
      }

      private record(call: string, request: BackfillResponse): BackfillResponse {
        this.calls.push(call);
        this.requests.set(request.requestId, request);
        return request;
      }
    }

    const listeners: JoinListener[] = [];
    afterEach(async () => {
      await Promise.all(listeners.splice(0).map((listener) => listener.close()));
    });

    /** A 2v2 whose first player of each team never showed, verified, behind a join listener. */
    function shortOnBothTeams(): {
      first: RosterResponse;
      gate: RosterGate;
      players: JoinListener;
      noShows: string[];
    } {
      const first = newSignedRoster({
        signer,
        serverId: SERVER_ID,
        players: [{ team: 0 }, { team: 0 }, { team: 1 }, { team: 1 }],
      });
      const gate = new RosterGate(new JoinTokenVerifier(keys), {
        serverId: SERVER_ID,
        matchId: first.matchId,
      });
      const check = gate.check(first, Date.now());
      if (!check.ok) throw new Error(`fixture roster rejected: ${check.reason}`);
      const players = new JoinListener(gate, check.roster, {
        host: '127.0.0.1',
        port: 0,
        handshakeTimeoutMs: 1_000,
      });
      listeners.push(players);
      const noShows = [0, 1].map((team) => first.entries.find((e) => e.team === team)!.playerId);
      return { first, gate, players, noShows };
    }

    const options = { timeoutSeconds: 30, pollMs: 10, connectDeadlineMs: 20 };

    function addedBetween(before: RosterResponse, after: RosterResponse): string[] {
      const held = new Set(before.entries.map((entry) => entry.playerId));
      return after.entries.map((entry) => entry.playerId).filter((id) => !held.has(id));
    }

    it("takes the newest revision once when it already carries the other team's players, and accepts each request with its own revision", async () => {
      const { first, gate, players, noShows } = shortOnBothTeams();
      // Team 0's players were published as revision 2, team 1's as 3; the roster serves 3.
      const second = newRosterRevision({ signer, base: first, drop: noShows, add: [{ team: 0 }] });
      const third = newRosterRevision({ signer, base: second, add: [{ team: 1 }] });
      const api = new ScriptedControlPlane(third, {
        0: { playerIds: addedBetween(first, second), revision: 2 },
        1: { playerIds: addedBetween(second, third), revision: 3 },
      });

      await new BackfillRunner(api.asClient(), gate, players, options).run(
        [
          { team: 0, slots: 1 },
          { team: 1, slots: 1 },
        ],
        new AbortController().signal,
      );

      expect(api.calls.filter((call) => call === 'roster')).toHaveLength(1);
      expect(api.calls).toEqual(
        expect.arrayContaining([
          'accept request-of-team-0 revision 2',
          'accept request-of-team-1 revision 3',
          'connect request-of-team-0 0',
          'connect request-of-team-1 0',
        ]),
      );
      expect(api.calls.some((call) => call.startsWith('cancel'))).toBe(false);
      expect(players.currentRoster().revision).toBe(3);
      // Nobody came: the played roster still counts everyone who was on any revision.
      expect(players.playedRoster().players.size).toBe(6);
    });

    it('cancels a request whose players the revision puts on another team', async () => {
      const { first, gate, players, noShows } = shortOnBothTeams();
      // Asked for team 1; the revision adds the player to team 0.
      const misplaced = newRosterRevision({
        signer,
        base: first,
        drop: noShows.slice(1),
        add: [{ team: 0 }],
      });
      const api = new ScriptedControlPlane(misplaced, {
        1: { playerIds: addedBetween(first, misplaced), revision: 2 },
      });

      await new BackfillRunner(api.asClient(), gate, players, options).run(
        [{ team: 1, slots: 1 }],
        new AbortController().signal,
      );

      expect(api.calls.filter((call) => call.startsWith('accept'))).toEqual([]);
      expect(api.calls.at(-1)).toBe('cancel request-of-team-1');
      // The refused revision was not taken: its player may not join.
      expect(players.currentRoster().revision).toBe(1);
    });
  });
});
