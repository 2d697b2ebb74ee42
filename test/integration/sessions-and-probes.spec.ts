import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { SessionResponse } from '@matchplane/contracts';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

const ISSUER = 'https://id.studio.test';
const AUDIENCE = 'matchplane';

describe('sessions (guest and JWT) through the real routes', () => {
  let api: PlayerApi;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'studio-1', alg: 'ES256', use: 'sig' };
    const jwksFile = path.join(tmpdir(), `mp-jwks-${randomUUID()}.json`);
    writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }));
    api = await startPlayerApi({
      PLAYER_JWT_JWKS_FILE: jwksFile,
      PLAYER_JWT_ISSUER: ISSUER,
      PLAYER_JWT_AUDIENCE: AUDIENCE,
    });
  });
  afterAll(() => api.close());

  const idToken = (sub: string, issuer = ISSUER) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'studio-1' })
      .setSubject(sub)
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);

  it('a guest gets a 256-bit token stored only as a hash, and resumes with its device secret', async () => {
    const guest = await api.newPlayer();
    expect(guest.token).toMatch(/^mps_[A-Za-z0-9_-]{43}$/);
    expect(guest.deviceSecret).toMatch(/^mpd_[A-Za-z0-9_-]{43}$/);
    const stored = await api.ds.query<{ token_hash: Buffer }[]>(
      `SELECT token_hash FROM sessions WHERE player_id = $1`,
      [guest.playerId],
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_hash.toString('utf8')).not.toContain(guest.token.slice(4));

    const resumed = await api.request('POST', '/v1/sessions', {
      body: { provider: 'guest', credential: guest.deviceSecret },
    });
    expect(resumed.statusCode).toBe(201);
    const session = resumed.json<SessionResponse>();
    expect(session.playerId).toBe(guest.playerId);
    expect(session.deviceSecret).toBeUndefined();
    expect(session.token).not.toBe(guest.token);
  });

  it('a revoked token and an expired token are 401s', async () => {
    const guest = await api.newPlayer();
    expect((await api.request('GET', '/v1/queue/options', { token: guest.token })).statusCode).toBe(
      200,
    );
    expect(
      (await api.request('DELETE', '/v1/sessions/current', { token: guest.token })).statusCode,
    ).toBe(204);
    const revoked = await api.request('GET', '/v1/queue/options', { token: guest.token });
    expect([revoked.statusCode, revoked.json().code]).toEqual([401, 'UNAUTHENTICATED']);

    const other = await api.newPlayer();
    // Time passing, not a seeded row: the session the route created is aged past its expiry.
    await api.ds.query(
      `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE player_id = $1`,
      [other.playerId],
    );
    const expired = await api.request('GET', '/v1/queue/options', { token: other.token });
    expect([expired.statusCode, expired.json().code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('a JWT from the configured issuer signs in the same player every time', async () => {
    const first = await api.request('POST', '/v1/sessions', {
      body: { provider: 'jwt', credential: await idToken('user-42') },
    });
    expect(first.statusCode).toBe(201);
    const again = await api.request('POST', '/v1/sessions', {
      body: { provider: 'jwt', credential: await idToken('user-42') },
    });
    expect(again.json<SessionResponse>().playerId).toBe(first.json<SessionResponse>().playerId);
    const [player] = await api.ds.query<{ identity_provider: string; external_subject: string }[]>(
      `SELECT identity_provider, external_subject FROM players WHERE id = $1`,
      [first.json<SessionResponse>().playerId],
    );
    expect(player).toEqual({ identity_provider: `jwt:${ISSUER}`, external_subject: 'user-42' });
  });

  it('a JWT from another issuer or a tampered one is 401 INVALID_CREDENTIAL and creates nobody', async () => {
    const [{ n: before }] = (await api.ds.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM players`,
    )) as [{ n: string }];
    const foreign = await api.request('POST', '/v1/sessions', {
      body: { provider: 'jwt', credential: await idToken('user-7', 'https://evil.test') },
    });
    expect([foreign.statusCode, foreign.json().code]).toEqual([401, 'INVALID_CREDENTIAL']);
    const token = await idToken('user-8');
    const [header, , signature] = token.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ sub: 'admin', iss: ISSUER, aud: AUDIENCE, exp: 4102444800 }),
    ).toString('base64url');
    const tampered = await api.request('POST', '/v1/sessions', {
      body: { provider: 'jwt', credential: `${header}.${forgedPayload}.${signature}` },
    });
    expect([tampered.statusCode, tampered.json().code]).toEqual([401, 'INVALID_CREDENTIAL']);
    const [{ n: after }] = (await api.ds.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM players`,
    )) as [{ n: string }];
    expect(after).toBe(before);
  });
});

describe('probe routes without a probe recorder', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({}, { playerEntry: { probeRecorder: null } });
  });
  afterAll(() => api.close());

  it('answer 503 NOT_CONFIGURED and persist nothing, never a success', async () => {
    const player = await api.newPlayer();
    const challenge = await api.request('POST', '/v1/probes/eu-west/challenge', {
      token: player.token,
    });
    expect([challenge.statusCode, challenge.json().code]).toEqual([503, 'NOT_CONFIGURED']);
    const answer = await api.request('POST', '/v1/probes/eu-west/answer', {
      token: player.token,
      body: { challengeId: randomUUID(), nonce: 'abc' },
    });
    expect([answer.statusCode, answer.json().code]).toEqual([503, 'NOT_CONFIGURED']);
    expect(
      await api.ds.query(`SELECT 1 FROM probe_challenges UNION ALL SELECT 1 FROM player_latencies`),
    ).toHaveLength(0);
  });
});

describe('probe answers', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({ PROBE_CHALLENGE_TTL_MS: '200' });
  });
  afterAll(() => api.close());

  it("another player's challenge is 403 PROBE_WRONG_PLAYER; a late answer is 410 PROBE_EXPIRED", async () => {
    const alice = await api.newPlayer();
    const bob = await api.newPlayer();
    const challenge = (
      await api.request('POST', '/v1/probes/eu-west/challenge', { token: alice.token })
    ).json<{ challengeId: string; nonce: string }>();
    const answerOf = { challengeId: challenge.challengeId, nonce: challenge.nonce };
    const stolen = await api.request('POST', '/v1/probes/eu-west/answer', {
      token: bob.token,
      body: answerOf,
    });
    expect([stolen.statusCode, stolen.json().code]).toEqual([403, 'PROBE_WRONG_PLAYER']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await api.request('POST', '/v1/probes/eu-west/answer', {
      token: alice.token,
      body: answerOf,
    });
    expect([late.statusCode, late.json().code]).toEqual([410, 'PROBE_EXPIRED']);
    expect(await api.ds.query(`SELECT 1 FROM player_latencies`)).toHaveLength(0);
  });

  it('the RTT is measured by the server: it grows with the time the client takes to answer', async () => {
    const player = await api.newPlayer();
    const challenge = (
      await api.request('POST', '/v1/probes/us-east/challenge', { token: player.token })
    ).json<{ challengeId: string; nonce: string }>();
    const answerOf = { challengeId: challenge.challengeId, nonce: challenge.nonce };
    await new Promise((resolve) => setTimeout(resolve, 120));
    const answer = await api.request('POST', '/v1/probes/us-east/answer', {
      token: player.token,
      body: answerOf,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json<{ rttMs: number }>().rttMs).toBeGreaterThanOrEqual(115);
  });
});
