import { startDelayProxy, type DelayProxy } from '../../apps/demo/src/delay-proxy';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { testServices } from '../support/test-env';

/*
 * The API-hosted probe (no PROBE_EDGES) stamps a challenge's issue time as its answer is sent,
 * after the challenge's INSERT: with every database round trip 100 ms long, a sample must not
 * carry one (it did when the issue time was stamped before the INSERT).
 */
describe('API-hosted probe issue time', () => {
  const DB_ADDED_RTT_MS = 100;
  let proxy: DelayProxy;
  let api: PlayerApi;

  beforeAll(async () => {
    proxy = await startDelayProxy({
      targetPort: testServices.port,
      targetHost: testServices.host,
      addedRttMs: DB_ADDED_RTT_MS,
    });
    api = await startPlayerApi({ DATABASE_HOST: '127.0.0.1', DATABASE_PORT: String(proxy.port) });
  });

  afterAll(async () => {
    await api?.close();
    await proxy?.close();
  });

  it('measures no database round trip inside the RTT', async () => {
    const { token } = await api.newPlayer();
    for (let sample = 0; sample < 3; sample += 1) {
      const answer = await api.probe(token, 'eu-west');
      expect([answer.statusCode, answer.body]).toEqual([200, expect.any(String)]);
      expect(answer.json<{ rttMs: number }>().rttMs).toBeLessThan(DB_ADDED_RTT_MS / 2);
    }
  });
});
