import { randomUUID } from 'node:crypto';
import { validCandidate } from '@matchplane/domain';
import { CandidateProjection } from '@matchplane/tickets';
import type { TicketResponse } from '@matchplane/contracts';
import { rebuildCandidates } from '../../apps/api/src/cli/candidates.command';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { deleteRedisPrefix } from '../support/redis';

describe(rebuildCandidates.name, () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi();
  });
  afterAll(() => api.close());

  it('restores every searching ticket after Redis lost the projection, and only those', async () => {
    const searching: TicketResponse[] = [];
    for (let i = 0; i < 3; i += 1) {
      const player = await api.newPlayer();
      await api.probe(player.token, 'eu-west');
      searching.push(
        (await api.enqueue(player.token, i === 0 ? 'squad' : 'duel')).json<TicketResponse>(),
      );
    }
    const leaver = await api.newPlayer();
    await api.probe(leaver.token, 'eu-west');
    const left = (await api.enqueue(leaver.token, 'duel')).json<TicketResponse>();
    await api.request('DELETE', `/v1/queue/tickets/${left.id}`, {
      token: leaver.token,
      idempotencyKey: randomUUID(),
    });

    await deleteRedisPrefix(api.prefix);
    const projection = api.app.get(CandidateProjection);
    expect(await projection.candidates('duel')).toEqual([]);

    const outcome = await rebuildCandidates(api.config);
    expect(outcome.applied).toBe(3);

    const duel = await projection.candidates('duel');
    const squad = await projection.candidates('squad');
    expect([...duel, ...squad].map((c) => c.ticketId).sort()).toEqual(
      searching.map((t) => t.id).sort(),
    );
    expect(
      [...duel, ...squad].every((c) =>
        validCandidate(c, new Date(), api.config.TICKET_HEARTBEAT_TIMEOUT_MS),
      ),
    ).toBe(true);
  });
});
