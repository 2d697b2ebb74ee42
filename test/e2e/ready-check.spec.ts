import { ErrorCode } from '@matchplane/contracts';
import {
  apiErrorOf,
  lastTicketChange,
  matchRow,
  readyPlayer,
  useControlPlane,
  withTimeout,
  type JourneyPlayer,
} from '../support/journey';

/*
 * The ready check through the real apps (API, dispatcher, matcher, allocator with its game
 * servers, maintenance): duels wait AWAITING_ACCEPTANCE, with no allocation asked of the provider,
 * until both players accept over POST /v1/matches/{id}/accept (the SDK's readyCheck). A decline or
 * the deadline cancels the match: whoever accepted searches again with the same ticket and its
 * enqueue time; whoever declined or did not answer gets the no-show cooldown.
 */
const ACCEPTANCE_TIMEOUT_MS = 4_000;
const OPERATOR_TOKEN = 'ops-token-0123456789abcdefghijklmnop';

describe('ready check', () => {
  const plane = useControlPlane({
    apis: 1,
    maintenance: true,
    env: { QUEUE_ACCEPTANCE_TIMEOUTS: `duel=${ACCEPTANCE_TIMEOUT_MS}` },
    appEnv: {
      maintenance: { RECONCILE_INTERVAL_MS: '500' },
      api: { OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}` },
    },
  });
  const players: JourneyPlayer[] = [];

  afterAll(() => {
    for (const player of players) player.close();
  });

  async function matchedPair(
    a: string,
    b: string,
  ): Promise<[JourneyPlayer, JourneyPlayer, string]> {
    const [first, second] = await Promise.all([
      readyPlayer(plane.apiUrl(0), a),
      readyPlayer(plane.apiUrl(0), b),
    ]);
    players.push(first, second);
    await first.enqueue();
    await second.enqueue();
    const [matchId, other] = await Promise.all([first.waitForMatch(), second.waitForMatch()]);
    expect(other).toBe(matchId);
    for (const player of [first, second]) {
      await player.log.waitForState(matchId, 'AWAITING_ACCEPTANCE');
    }
    return [first, second, matchId];
  }

  /** Provider allocations the allocator has made (its `allocate` step, timed around the call). */
  async function providerCalls(): Promise<number> {
    const metrics = await (await fetch(`${plane.allocator!.url}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('allocation_step_seconds_count{') && l.includes('step="allocate"'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  async function allocationsOf(matchId: string): Promise<number> {
    const [row] = await plane.ds.query<{ count: string }[]>(
      `SELECT count(*)::text AS count FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    return Number(row!.count);
  }

  it('shows each mode its ready check in the queue options', () =>
    plane.diagnose(async () => {
      const player = await readyPlayer(plane.apiUrl(0), 'options');
      players.push(player);
      const { modes } = await player.client.queueOptions();
      expect(modes.find((m) => m.mode === 'duel')?.acceptanceTimeoutMs).toBe(ACCEPTANCE_TIMEOUT_MS);
      expect(modes.find((m) => m.mode === 'squad')).not.toHaveProperty('acceptanceTimeoutMs');
    }));

  it('allocates once both accept, not before: the match then plays to its end', () =>
    plane.diagnose(async () => {
      const [a, b, matchId] = await matchedPair('accepts-a', 'accepts-b');
      const callsBefore = await providerCalls();

      const first = await a.client.readyCheck.accept(matchId);
      expect(first).toEqual({ matchId, answer: 'ACCEPTED', matchState: 'AWAITING_ACCEPTANCE' });
      // Idempotent: the same answer again changes nothing.
      await expect(a.client.readyCheck.accept(matchId)).resolves.toEqual(first);
      // Half accepted: still nothing asked of the provider.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await matchRow(plane.ds, matchId)).toMatchObject({
        state: 'AWAITING_ACCEPTANCE',
        revision: 1,
      });
      expect(await allocationsOf(matchId)).toBe(0);
      expect(await providerCalls()).toBe(callsBefore);

      // Someone else's match is not found; an answer is final.
      const stranger = await readyPlayer(plane.apiUrl(0), 'stranger');
      players.push(stranger);
      await expect(apiErrorOf(stranger.client.readyCheck.accept(matchId))).resolves.toMatchObject({
        status: 404,
        code: ErrorCode.NOT_FOUND,
      });
      await expect(apiErrorOf(a.client.readyCheck.decline(matchId))).resolves.toMatchObject({
        status: 409,
        code: ErrorCode.ACCEPTANCE_ALREADY_ANSWERED,
      });

      await expect(b.client.readyCheck.accept(matchId)).resolves.toEqual({
        matchId,
        answer: 'ACCEPTED',
        matchState: 'ALLOCATING',
      });
      // A repeat after the match moved on still answers as the first time did.
      await expect(b.client.readyCheck.accept(matchId)).resolves.toMatchObject({
        answer: 'ACCEPTED',
      });

      await Promise.all([a.waitForAssignment(), b.waitForAssignment()]);
      expect(await providerCalls()).toBe(callsBefore + 1);
      const [gameA, gameB] = await Promise.all([a.join(), b.join()]);
      const ended = await withTimeout(gameA.ended, 30_000, 'the game to end');
      expect(ended).toEqual({ outcome: 'COMPLETED', winningTeam: expect.any(Number) });
      await gameB.ended;
      for (const player of [a, b]) {
        await player.log.waitForState(matchId, 'COMPLETED');
        player.log.assertOrdered(matchId, [
          'AWAITING_ACCEPTANCE',
          'ALLOCATING',
          'PROCESS_READY',
          'ASSIGNMENT_READY',
          'IN_PROGRESS',
          'COMPLETED',
        ]);
      }
      // Too late to answer otherwise: the match has moved on.
      await expect(apiErrorOf(a.client.readyCheck.decline(matchId))).resolves.toMatchObject({
        status: 409,
        code: ErrorCode.NOT_AWAITING_ACCEPTANCE,
        problem: { matchState: 'COMPLETED' },
      });
    }));

  it('cancels on a decline: the one who accepted searches again with its place, the decliner cools down', () =>
    plane.diagnose(async () => {
      const [accepter, decliner, matchId] = await matchedPair('accepter', 'decliner');
      const callsBefore = await providerCalls();
      const queuedAt = accepter.ticket!.enqueuedAt;
      await accepter.client.readyCheck.accept(matchId);
      const declined = await decliner.client.readyCheck.decline(matchId);
      expect(declined).toEqual({ matchId, answer: 'DECLINED', matchState: 'CANCELLED' });
      await expect(decliner.client.readyCheck.decline(matchId)).resolves.toEqual(declined);

      expect(await matchRow(plane.ds, matchId)).toMatchObject({
        state: 'CANCELLED',
        revision: 2,
        failure_reason: 'ACCEPTANCE_DECLINED',
      });
      const requeued = await accepter.refreshTicket();
      expect(requeued).toMatchObject({ state: 'SEARCHING', enqueuedAt: queuedAt });
      expect(requeued).not.toHaveProperty('matchId');
      expect(await lastTicketChange(plane.ds, accepter.ticketId)).toMatchObject({
        from: 'MATCHED',
        to: 'SEARCHING',
        reason: 'MATCH_CANCELLED',
      });
      expect(await decliner.refreshTicket()).toMatchObject({
        state: 'CANCELLED',
        endReason: 'ACCEPTANCE_DECLINED',
      });
      for (const player of [accepter, decliner]) {
        await player.log.waitForState(matchId, 'CANCELLED');
        player.log.assertOrdered(matchId, ['AWAITING_ACCEPTANCE', 'CANCELLED']);
      }
      expect(await allocationsOf(matchId)).toBe(0);
      expect(await providerCalls()).toBe(callsBefore);

      const refused = await apiErrorOf(decliner.enqueue());
      expect(refused).toMatchObject({ status: 429, code: ErrorCode.COOLDOWN_ACTIVE });
      expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      // The accepter's answer stands (a repeat replays it), even though the match is gone.
      await expect(accepter.client.readyCheck.accept(matchId)).resolves.toMatchObject({
        answer: 'ACCEPTED',
      });
      expect((await accepter.cancel()).state).toBe('CANCELLED');
    }));

  it("lets an operator lift a decliner's cooldown (audited): it queues again at once", () =>
    plane.diagnose(async () => {
      const [, decliner, matchId] = await matchedPair('patient', 'tester');
      await decliner.client.readyCheck.decline(matchId);
      expect(await apiErrorOf(decliner.enqueue())).toMatchObject({
        code: ErrorCode.COOLDOWN_ACTIVE,
      });
      const lift = (playerId: string, body: unknown) =>
        fetch(`${plane.apiUrl(0)}/v1/admin/players/${playerId}/cooldown/lift`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${OPERATOR_TOKEN}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        });
      const playerId = decliner.playerId;

      const unexplained = await lift(playerId, { forgiveOffences: true });
      expect(unexplained.status).toBe(400);
      expect(await unexplained.json()).toMatchObject({ code: ErrorCode.VALIDATION_FAILED });
      expect(await apiErrorOf(decliner.enqueue())).toMatchObject({
        code: ErrorCode.COOLDOWN_ACTIVE,
      });
      const unknown = await lift('00000000-0000-4000-8000-000000000000', { reason: 'typo' });
      expect(unknown.status).toBe(404);

      const lifted = await lift(playerId, { reason: 'QA account', forgiveOffences: true });
      expect(lifted.status).toBe(200);
      const answer = (await lifted.json()) as Record<string, unknown>;
      expect(answer).toMatchObject({ playerId, offencesBefore: 1, offencesAfter: 0 });
      expect(Date.parse(answer.liftedCooldownUntil as string)).toBeGreaterThan(Date.now());
      const [audit] = await plane.ds.query<{ actor: string; reason: string }[]>(
        `SELECT actor, reason FROM audit_log WHERE action = 'player.cooldown.lifted' AND target_id = $1`,
        [playerId],
      );
      expect(audit).toEqual({ actor: 'ops', reason: 'QA account' });

      expect((await decliner.enqueue()).state).toBe('SEARCHING');
      expect((await decliner.cancel()).state).toBe('CANCELLED');
    }));

  it('cancels at the deadline: the one who accepted searches again, the silent one cools down', () =>
    plane.diagnose(async () => {
      const [accepter, silent, matchId] = await matchedPair('on-time', 'silent');
      const callsBefore = await providerCalls();
      const queuedAt = accepter.ticket!.enqueuedAt;
      await accepter.client.readyCheck.accept(matchId);

      const ended = await silent.waitForTicket(
        (t) => t.state !== 'MATCHED',
        ACCEPTANCE_TIMEOUT_MS + 20_000,
      );
      expect(ended).toMatchObject({ state: 'FAILED', endReason: 'ACCEPTANCE_TIMEOUT' });
      expect(await matchRow(plane.ds, matchId)).toMatchObject({
        state: 'CANCELLED',
        failure_reason: 'ACCEPTANCE_TIMEOUT',
      });
      expect(await accepter.refreshTicket()).toMatchObject({
        state: 'SEARCHING',
        enqueuedAt: queuedAt,
      });
      for (const player of [accepter, silent]) {
        await player.log.waitForState(matchId, 'CANCELLED');
        player.log.assertOrdered(matchId, ['AWAITING_ACCEPTANCE', 'CANCELLED']);
      }
      expect(await allocationsOf(matchId)).toBe(0);
      expect(await providerCalls()).toBe(callsBefore);

      const refused = await apiErrorOf(silent.enqueue());
      expect(refused).toMatchObject({ status: 429, code: ErrorCode.COOLDOWN_ACTIVE });
      expect((await accepter.cancel()).state).toBe('CANCELLED');
    }));
});
