import type { SessionResponse } from '@matchplane/contracts';
import {
  StudioIdentityModule,
  StudioIdentityVerifier,
  StudioTickets,
} from '../../apps/studio-example/src/studio-identity.module';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** docs/EXTENDING.md "Your own player identity": the example module booted into the real API. */
describe('extending: a studio identity verifier', () => {
  let api: PlayerApi;
  let tickets: StudioTickets;

  beforeAll(async () => {
    api = await startPlayerApi(
      {},
      {
        playerEntry: {
          verifiers: [StudioIdentityVerifier],
          verifierImports: [StudioIdentityModule],
        },
      },
    );
    tickets = api.app.get(StudioTickets);
  });
  afterAll(() => api.close());

  it('signs a studio account in as the same player every time, and refuses a forged ticket', async () => {
    const ticket = tickets.issue('account-1234', new Date(Date.now() + 60_000));
    const first = await api.request('POST', '/v1/sessions', {
      body: { provider: 'studio', credential: ticket },
    });
    expect(first.statusCode).toBe(201);
    const again = await api.request('POST', '/v1/sessions', {
      body: {
        provider: 'studio',
        credential: tickets.issue('account-1234', new Date(Date.now() + 60_000)),
      },
    });
    expect(again.json<SessionResponse>().playerId).toBe(first.json<SessionResponse>().playerId);

    const forged = await api.request('POST', '/v1/sessions', {
      body: { provider: 'studio', credential: `${ticket.split('.')[0]}.AAAA` },
    });
    expect([forged.statusCode, forged.json().code]).toEqual([401, 'INVALID_CREDENTIAL']);
    const expired = await api.request('POST', '/v1/sessions', {
      body: {
        provider: 'studio',
        credential: tickets.issue('account-1234', new Date(Date.now() - 1)),
      },
    });
    expect(expired.statusCode).toBe(401);

    // The built-in guest verifier is still there beside it.
    expect((await api.request('POST', '/v1/sessions', { body: {} })).statusCode).toBe(201);
  });
});
