import { ErrorCode } from '@matchplane/contracts';
import { MatchplaneApiError } from '@matchplane/sdk';
import { runCli } from '../support/processes';
import {
  playJourneyPlayer,
  readyPlayer,
  useControlPlane,
  type JourneyPlayer,
} from '../support/journey';

/*
 * Live operations through the real apps (API, dispatcher, matcher, allocator and its game servers
 * as processes): an operator pauses, drains and resumes modes and regions over the admin routes;
 * players see it through the SDK only.
 */
const OPERATOR_TOKEN = 'live-ops-token-0123456789abcdefghijklmnop';

describe('live operations: pause, drain and resume', () => {
  const plane = useControlPlane({
    apis: 1,
    env: { OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}`, PROBE_REGIONS: 'eu-west,us-east' },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  async function ready(name: string, regions = ['eu-west']): Promise<JourneyPlayer> {
    const player = await readyPlayer(plane.apiUrl(0), name, { regions });
    players.push(player);
    return player;
  }

  async function operator(action: string, target: string, body: Record<string, unknown>) {
    const response = await fetch(`${plane.apiUrl(0)}/v1/admin/queue-controls/${target}/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function refusal(player: JourneyPlayer): Promise<MatchplaneApiError> {
    const error: unknown = await player.enqueue().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MatchplaneApiError);
    return error as MatchplaneApiError;
  }

  it('pauses a mode: new tickets 409 with Retry-After, the searching one kept and told why; resumed, it is matched', () =>
    plane.diagnose(async () => {
      const first = await ready('first');
      await first.enqueue();
      const paused = await operator('pause', 'mode/duel', {
        reason: 'build 1.2 rollout',
        retryAfterSeconds: 120,
      });
      expect(paused).toEqual({
        status: 200,
        body: expect.objectContaining({
          scope: 'mode',
          name: 'duel',
          state: 'PAUSED',
          setBy: 'ops',
        }),
      });
      const held = await first.waitForTicket((t) => t.explanation?.code === 'MODE_PAUSED');
      expect(held.state).toBe('SEARCHING');
      expect(held.explanation?.message).toContain('build 1.2 rollout');

      const second = await ready('second');
      const refused = await refusal(second);
      expect(refused).toMatchObject({
        status: 409,
        code: ErrorCode.QUEUE_PAUSED,
        retryAfterSeconds: 120,
      });
      expect(refused.detail).toContain('build 1.2 rollout');
      expect((await first.refreshTicket()).state).toBe('SEARCHING');

      expect((await operator('resume', 'mode/duel', { reason: 'rollout done' })).body).toEqual({
        scope: 'mode',
        name: 'duel',
        state: 'OPEN',
      });
      const [a, b] = await Promise.all([
        playJourneyPlayer(first, { queued: true }),
        playJourneyPlayer(second),
      ]);
      expect(b.matchId).toBe(a.matchId);
      const audit = await plane.ds.query<{ action: string; actor: string }[]>(
        `SELECT action, actor FROM audit_log WHERE target_type = 'mode' AND target_id = 'duel'
          ORDER BY id`,
      );
      expect(audit).toEqual([
        { action: 'queue.control.paused', actor: 'ops' },
        { action: 'queue.control.resumed', actor: 'ops' },
      ]);
    }));

  it('drains a mode: the match under way finishes, a searching ticket is still matched, nothing new queues', () =>
    plane.diagnose(async () => {
      const [a, b] = await Promise.all([ready('drain-a'), ready('drain-b')]);
      await Promise.all([a.enqueue(), b.enqueue()]);
      await a.waitForMatch();
      const searching = await ready('drain-searching');
      await searching.enqueue();
      expect(
        (await operator('drain', 'mode/duel', { reason: 'retiring duel' })).body,
      ).toMatchObject({
        state: 'DRAINING',
      });
      const refused = await refusal(await ready('drain-late'));
      expect(refused).toMatchObject({ status: 409, code: ErrorCode.QUEUE_DRAINING });

      const [playedA, playedB] = await Promise.all([
        playJourneyPlayer(a, { queued: true }),
        playJourneyPlayer(b, { queued: true }),
      ]);
      expect(playedB.matchId).toBe(playedA.matchId);
      expect(playedA.ticket.state).toBe('COMPLETED');
      // Still searching, not held: a draining mode matches what it already took in.
      const waiting = await searching.waitForTicket((t) => t.explanation !== undefined);
      expect(waiting.explanation?.code).not.toBe('MODE_PAUSED');
      await searching.cancel();
      await operator('resume', 'mode/duel', { reason: 'kept after all' });
    }));

  it('pauses a region: no match is placed there, and a player who measured only it cannot queue', () =>
    plane.diagnose(async () => {
      await operator('pause', 'region/eu-west', { reason: 'eu-west fleet maintenance' });
      const onlyThere = await ready('only-eu', ['eu-west']);
      const refused = await refusal(onlyThere);
      expect(refused).toMatchObject({ status: 409, code: ErrorCode.QUEUE_PAUSED });
      expect(refused.detail).toContain('Every region you measured (eu-west)');

      const [a, b] = await Promise.all([
        ready('both-a', ['eu-west', 'us-east']),
        ready('both-b', ['eu-west', 'us-east']),
      ]);
      const [playedA] = await Promise.all([playJourneyPlayer(a), playJourneyPlayer(b)]);
      const [match] = await plane.ds.query<{ region: string }[]>(
        `SELECT region FROM matches WHERE id = $1`,
        [playedA.matchId],
      );
      expect(match!.region).toBe('us-east');
      await operator('resume', 'region/eu-west', { reason: 'done' });
    }));

  it('holds and opens a mode from the live-ops CLI, audited under its actor', () =>
    plane.diagnose(async () => {
      const cli = (...args: string[]) =>
        runCli('dist/apps/api/src/cli/live-ops.main.js', plane.apis[0]!.env, args);
      const paused = await cli(
        'pause',
        'mode',
        'duel',
        '--reason=cli drill',
        '--retry-after=30',
        '--actor=ops-cli',
      );
      expect(paused.code).toBe(0);
      expect(paused.output).toMatch(
        /^mode duel PAUSED since .* by ops-cli: cli drill \(expected 30 s\)/,
      );
      const refused = await refusal(await ready('cli-held'));
      expect(refused).toMatchObject({
        status: 409,
        code: ErrorCode.QUEUE_PAUSED,
        retryAfterSeconds: 30,
      });
      expect((await cli('list', '--json')).output.trim()).toContain('"state":"PAUSED"');
      expect(
        (await cli('resume', 'mode', 'duel', '--reason=drill over', '--actor=ops-cli')).output,
      ).toBe('mode duel OPEN\n');
      const unknown = await cli('pause', 'mode', 'nonesuch', '--reason=x', '--actor=ops-cli');
      expect(unknown.code).not.toBe(0);
      expect(unknown.output).toContain('Unknown mode "nonesuch"');
      const usage = await cli('pause', 'mode', 'duel');
      expect([usage.code, usage.output]).toEqual([2, expect.stringContaining('needs --reason')]);
      // No --actor and no OPERATOR_NAME: nobody to audit, so a usage error, nothing written.
      const anonymous = await cli('pause', 'mode', 'duel', '--reason=x');
      expect([anonymous.code, anonymous.output]).toEqual([
        2,
        expect.stringContaining('live-ops: pause needs --actor=NAME (or OPERATOR_NAME)'),
      ]);
      const help = await cli('--help');
      expect([help.code, help.output]).toEqual([0, expect.stringMatching(/^usage: /)]);
      const [row] = await plane.ds.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM audit_log WHERE actor = 'ops-cli'`,
      );
      expect(row!.n).toBe(2);
    }));

  async function admin(path: string, body: Record<string, unknown>) {
    const response = await fetch(`${plane.apiUrl(0)}/v1/admin/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('cancels a match being set up: every client is told, both players search again and play another', () =>
    plane.diagnose(async () => {
      // Held in ALLOCATING: no allocator to take it further.
      await plane.allocator!.stop();
      const [a, b] = await Promise.all([ready('cancel-a'), ready('cancel-b')]);
      await Promise.all([a.enqueue(), b.enqueue()]);
      const cancelledId = await a.waitForMatch();
      const cancelled = await admin(`matches/${cancelledId.toUpperCase()}/cancel`, {
        reason: 'bad build on the fleet',
      });
      expect(cancelled).toEqual({
        status: 200,
        body: {
          matchId: cancelledId,
          state: 'CANCELLED',
          revision: 2,
          requeued: [a.playerId, b.playerId].sort(),
          released: [],
        },
      });
      for (const player of [a, b]) await player.log.waitForState(cancelledId, 'CANCELLED');
      const [row] = await plane.ds.query<{ failure_reason: string }[]>(
        `SELECT failure_reason FROM matches WHERE id = $1`,
        [cancelledId],
      );
      expect(row!.failure_reason).toBe('OPERATOR_CANCELLED');
      expect(
        (await admin(`matches/${cancelledId}/cancel`, { reason: 'again' })).body,
      ).toMatchObject({
        code: 'MATCH_STATE_CONFLICT',
      });
      await plane.allocator!.start();
      // Still heartbeating their tickets, they are matched again and play.
      const replayed = await Promise.all([
        playJourneyPlayer(a, { queued: true }),
        playJourneyPlayer(b, { queued: true }),
      ]);
      expect(replayed[0].matchId).not.toBe(cancelledId);
      expect(replayed[1].matchId).toBe(replayed[0].matchId);
      const [audit] = await plane.ds.query<{ actor: string; reason: string }[]>(
        `SELECT actor, reason FROM audit_log WHERE action = 'match.cancelled' AND target_id = $1`,
        [cancelledId],
      );
      expect(audit).toEqual({ actor: 'ops', reason: 'bad build on the fleet' });
    }));

  it("releases a player's live ticket: the player may queue again at once", () =>
    plane.diagnose(async () => {
      const stuck = await ready('stuck');
      await stuck.enqueue();
      const released = await admin(`players/${stuck.playerId}/release-tickets`, {
        reason: 'support case 4411',
      });
      expect(released).toEqual({
        status: 200,
        body: {
          playerId: stuck.playerId,
          tickets: [{ ticketId: stuck.ticketId, playerId: stuck.playerId, from: 'SEARCHING' }],
        },
      });
      await expect(stuck.refreshTicket()).resolves.toMatchObject({
        state: 'CANCELLED',
        endReason: 'OPERATOR_RELEASED',
      });
      await expect(stuck.enqueue()).resolves.toMatchObject({ state: 'SEARCHING' });
      // The same from the CLI.
      const cli = await runCli('dist/apps/api/src/cli/live-ops.main.js', plane.apis[0]!.env, [
        'release-tickets',
        stuck.playerId,
        '--reason=support case 4412',
        '--actor=ops-cli',
        '--json',
      ]);
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.output)).toEqual({
        playerId: stuck.playerId,
        tickets: [{ ticketId: stuck.ticketId, playerId: stuck.playerId, from: 'SEARCHING' }],
      });
      expect(
        (await admin(`players/${stuck.playerId}/release-tickets`, { reason: 'x' })).body,
      ).toMatchObject({
        code: 'TICKET_NOT_FOUND',
      });
    }));

  it('refuses an unknown mode, a bad scope and a missing reason, and anyone without the operator token', () =>
    plane.diagnose(async () => {
      expect(await operator('pause', 'mode/nonesuch', { reason: 'x' })).toMatchObject({
        status: 422,
        body: { code: 'UNKNOWN_MODE' },
      });
      expect((await operator('pause', 'galaxy/duel', { reason: 'x' })).status).toBe(400);
      expect((await operator('pause', 'mode/duel', {})).status).toBe(400);
      const anonymous = await fetch(`${plane.apiUrl(0)}/v1/admin/queue-controls`);
      expect(anonymous.status).toBe(401);
    }));
});
