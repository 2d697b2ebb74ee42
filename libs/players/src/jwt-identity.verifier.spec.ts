import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type KeyLike,
} from 'jose';
import {
  JwksUnavailableError,
  JwtIdentityVerifier,
  MAX_JWT_SUBJECT_LENGTH,
} from './jwt-identity.verifier';
import { InvalidCredentialError } from './player-identity.verifier';

const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'matchplane-players';

interface SigningKey {
  alg: string;
  kid: string;
  privateKey: KeyLike;
  publicJwk: JWK;
}

async function newSigningKey(alg: string, kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return {
    alg,
    kid,
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
  };
}

function jwksOf(...keys: SigningKey[]): JSONWebKeySet {
  return { keys: keys.map((k) => k.publicJwk) };
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A token as a well-behaved identity provider would issue it; `claims` overrides or (undefined) removes. */
function signToken(
  key: SigningKey,
  claims: Partial<Record<keyof JWTPayload, unknown>> = {},
): Promise<string> {
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'player-123',
    iat: nowSeconds(),
    exp: nowSeconds() + 300,
  };
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined) delete payload[name];
    else payload[name] = value;
  }
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(key.privateKey);
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

async function expectInvalid(
  verifier: JwtIdentityVerifier,
  token: string | undefined,
  message: string,
) {
  const err = await rejection(verifier.verify(token));
  expect(err).toBeInstanceOf(InvalidCredentialError);
  expect(err.message).toBe(message);
  if (token) expect(err.message).not.toContain(token);
  expect(err.cause).toBeUndefined();
}

describe(JwtIdentityVerifier.name, () => {
  let rsa: SigningKey;
  let ec: SigningKey;
  let ed: SigningKey;
  let stranger: SigningKey;
  let verifier: JwtIdentityVerifier;

  beforeAll(async () => {
    [rsa, ec, ed, stranger] = await Promise.all([
      newSigningKey('RS256', 'rsa-1'),
      newSigningKey('ES256', 'ec-1'),
      newSigningKey('EdDSA', 'ed-1'),
      newSigningKey('ES256', 'not-published'),
    ]);
    verifier = new JwtIdentityVerifier({
      jwks: jwksOf(rsa, ec, ed),
      issuer: ISSUER,
      audience: AUDIENCE,
    });
  });

  describe('valid tokens', () => {
    it.each(['RS256', 'ES256', 'EdDSA'])(
      'accepts a token signed with %s and scopes the subject by issuer',
      async (alg) => {
        const key = [rsa, ec, ed].find((k) => k.alg === alg)!;
        await expect(verifier.verify(await signToken(key))).resolves.toEqual({
          kind: 'external',
          provider: `jwt:${ISSUER}`,
          subject: 'player-123',
        });
      },
    );

    it('answers to "jwt" by default and to a configured provider name', () => {
      expect(verifier.provider).toBe('jwt');
      const named = new JwtIdentityVerifier({
        jwks: jwksOf(rsa),
        issuer: ISSUER,
        audience: AUDIENCE,
        providerName: 'studio-sso',
      });
      expect(named.provider).toBe('studio-sso');
      expect(named.identityProvider).toBe(`jwt:${ISSUER}`);
    });

    it('gives the same sub from two issuers two different identities', async () => {
      const other = new JwtIdentityVerifier({
        jwks: jwksOf(rsa),
        issuer: 'https://other.test',
        audience: AUDIENCE,
      });
      const mine = await verifier.verify(await signToken(rsa));
      const theirs = await other.verify(await signToken(rsa, { iss: 'https://other.test' }));
      expect(mine).toMatchObject({ subject: 'player-123' });
      expect(theirs).toMatchObject({ subject: 'player-123' });
      expect(mine).not.toEqual(theirs);
    });

    it('accepts one of several audiences and a token expired within the clock tolerance', async () => {
      const token = await signToken(ec, { aud: ['other-app', AUDIENCE], exp: nowSeconds() - 10 });
      await expect(verifier.verify(token)).resolves.toMatchObject({ subject: 'player-123' });
    });

    it('accepts a subject of the maximum length', async () => {
      const sub = 's'.repeat(MAX_JWT_SUBJECT_LENGTH);
      await expect(verifier.verify(await signToken(rsa, { sub }))).resolves.toMatchObject({
        subject: sub,
      });
    });
  });

  describe('rejected tokens', () => {
    it('rejects a missing or empty credential', async () => {
      await expectInvalid(verifier, undefined, 'missing credential');
      await expectInvalid(verifier, '', 'missing credential');
    });

    it('rejects garbage and oversized credentials without parsing them', async () => {
      await expectInvalid(verifier, 'not-a-jwt', 'malformed token');
      await expectInvalid(verifier, 'a.b.c', 'malformed token');
      await expectInvalid(verifier, 'x'.repeat(20_000), 'credential too long');
    });

    it('rejects an expired token', async () => {
      await expectInvalid(
        verifier,
        await signToken(rsa, { exp: nowSeconds() - 120 }),
        'token expired',
      );
    });

    it('rejects a token that is not yet valid', async () => {
      await expectInvalid(
        verifier,
        await signToken(rsa, { nbf: nowSeconds() + 120 }),
        'token not yet valid',
      );
    });

    it('rejects a token without an expiry', async () => {
      await expectInvalid(
        verifier,
        await signToken(rsa, { exp: undefined }),
        'token has no expiry',
      );
    });

    it('rejects a wrong or missing issuer', async () => {
      await expectInvalid(
        verifier,
        await signToken(rsa, { iss: 'https://evil.test/' }),
        'unexpected token issuer',
      );
      await expectInvalid(
        verifier,
        await signToken(rsa, { iss: undefined }),
        'unexpected token issuer',
      );
    });

    it('rejects a wrong audience', async () => {
      await expectInvalid(
        verifier,
        await signToken(ec, { aud: 'another-game' }),
        'unexpected token audience',
      );
    });

    it('rejects a tampered payload', async () => {
      const [header, , signature] = (await signToken(rsa)).split('.');
      const forged = b64url({ iss: ISSUER, aud: AUDIENCE, sub: 'admin', exp: nowSeconds() + 300 });
      await expectInvalid(verifier, `${header}.${forged}.${signature}`, 'token signature invalid');
    });

    it('rejects a token signed by a key the JWKS does not publish', async () => {
      await expectInvalid(verifier, await signToken(stranger), 'token signing key unknown');
    });

    it('rejects a token whose kid is published but whose signature is by another key', async () => {
      const impostor = { ...stranger, kid: ec.kid };
      await expectInvalid(verifier, await signToken(impostor), 'token signature invalid');
    });

    it('rejects an unsigned alg "none" token', async () => {
      const payload = { iss: ISSUER, aud: AUDIENCE, sub: 'player-123', exp: nowSeconds() + 300 };
      const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
      await expectInvalid(verifier, token, 'token algorithm not allowed');
    });

    it('rejects an HS256 token (no algorithm confusion with a public key)', async () => {
      const header = b64url({ alg: 'HS256', kid: rsa.kid });
      const payload = b64url({
        iss: ISSUER,
        aud: AUDIENCE,
        sub: 'player-123',
        exp: nowSeconds() + 300,
      });
      await expectInvalid(
        verifier,
        `${header}.${payload}.c2lnbmF0dXJl`,
        'token algorithm not allowed',
      );
    });

    it('rejects an algorithm outside a narrowed allow-list', async () => {
      const rsaOnly = new JwtIdentityVerifier({
        jwks: jwksOf(rsa, ec),
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['RS256'],
      });
      await expect(rsaOnly.verify(await signToken(rsa))).resolves.toMatchObject({
        kind: 'external',
      });
      await expectInvalid(rsaOnly, await signToken(ec), 'token algorithm not allowed');
    });

    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['not a string', 42],
      ['too long', 's'.repeat(MAX_JWT_SUBJECT_LENGTH + 1)],
    ])('rejects a subject that is %s', async (_case, sub) => {
      await expectInvalid(verifier, await signToken(rsa, { sub }), 'token has no valid subject');
    });
  });

  describe('construction', () => {
    it.each([[['none']], [['HS256']], [['RS256', 'HS512']]])(
      'refuses the algorithm allow-list %j',
      (algorithms: string[]) => {
        expect(
          () =>
            new JwtIdentityVerifier({
              jwks: jwksOf(rsa),
              issuer: ISSUER,
              audience: AUDIENCE,
              algorithms,
            }),
        ).toThrow(/not allowed/);
      },
    );

    it('requires an issuer and an audience', () => {
      expect(
        () => new JwtIdentityVerifier({ jwks: jwksOf(rsa), issuer: ' ', audience: AUDIENCE }),
      ).toThrow(/issuer/);
      expect(
        () => new JwtIdentityVerifier({ jwks: jwksOf(rsa), issuer: ISSUER, audience: [] }),
      ).toThrow(/audience/);
    });

    it('refuses a JWKS that carries private key material', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const privateJwk = { ...(await exportJWK(privateKey)), kid: 'oops' };
      expect(
        () =>
          new JwtIdentityVerifier({
            jwks: { keys: [privateJwk] },
            issuer: ISSUER,
            audience: AUDIENCE,
          }),
      ).toThrow(/private or symmetric key material \(d\)/);
    });

    it('refuses a malformed JWKS and a non-http JWKS URL', () => {
      const notJwks = { keys: 'nope' } as unknown as JSONWebKeySet;
      expect(
        () => new JwtIdentityVerifier({ jwks: notJwks, issuer: ISSUER, audience: AUDIENCE }),
      ).toThrow(/keys/);
      expect(
        () =>
          new JwtIdentityVerifier({
            jwks: 'file:///etc/jwks.json',
            issuer: ISSUER,
            audience: AUDIENCE,
          }),
      ).toThrow(/http\(s\)/);
    });
  });

  describe('fromConfig', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'jwks-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('is undefined when no PLAYER_JWT_* variable is set (blank counts as unset)', () => {
      expect(JwtIdentityVerifier.fromConfig({})).toBeUndefined();
      expect(JwtIdentityVerifier.fromConfig({ PLAYER_JWT_ISSUER: '  ' })).toBeUndefined();
    });

    it('names every missing variable when partly configured', () => {
      expect(() => JwtIdentityVerifier.fromConfig({ PLAYER_JWT_ISSUER: ISSUER })).toThrow(
        'JWT players are partly configured: missing PLAYER_JWT_JWKS_URL or PLAYER_JWT_JWKS_FILE, PLAYER_JWT_AUDIENCE',
      );
      expect(() =>
        JwtIdentityVerifier.fromConfig({
          PLAYER_JWT_JWKS_URL: 'https://id.example.test/jwks',
          PLAYER_JWT_AUDIENCE: AUDIENCE,
        }),
      ).toThrow('JWT players are partly configured: missing PLAYER_JWT_ISSUER');
    });

    it('refuses both a JWKS URL and a JWKS file', () => {
      expect(() =>
        JwtIdentityVerifier.fromConfig({
          PLAYER_JWT_JWKS_URL: 'https://id.example.test/jwks',
          PLAYER_JWT_JWKS_FILE: join(dir, 'jwks.json'),
          PLAYER_JWT_ISSUER: ISSUER,
          PLAYER_JWT_AUDIENCE: AUDIENCE,
        }),
      ).toThrow(/not both/);
    });

    it('loads a JWKS file and verifies with it, keeping the configured provider name', async () => {
      const file = join(dir, 'jwks.json');
      writeFileSync(file, JSON.stringify(jwksOf(ec)));
      const fromFile = JwtIdentityVerifier.fromConfig(
        { PLAYER_JWT_JWKS_FILE: file, PLAYER_JWT_ISSUER: ISSUER, PLAYER_JWT_AUDIENCE: AUDIENCE },
        { providerName: 'sso' },
      );
      expect(fromFile?.provider).toBe('sso');
      await expect(fromFile?.verify(await signToken(ec))).resolves.toMatchObject({
        subject: 'player-123',
      });
    });

    it('fails clearly on an unreadable or non-JSON JWKS file, without quoting it', () => {
      const config = { PLAYER_JWT_ISSUER: ISSUER, PLAYER_JWT_AUDIENCE: AUDIENCE };
      expect(() =>
        JwtIdentityVerifier.fromConfig({
          ...config,
          PLAYER_JWT_JWKS_FILE: join(dir, 'absent.json'),
        }),
      ).toThrow(/absent\.json cannot be read/);
      const garbled = join(dir, 'garbled.json');
      writeFileSync(garbled, '{"keys": [ secret-ish');
      expect(() =>
        JwtIdentityVerifier.fromConfig({ ...config, PLAYER_JWT_JWKS_FILE: garbled }),
      ).toThrow(/^PLAYER_JWT_JWKS_FILE .*garbled\.json is not valid JSON$/);
    });
  });

  describe('remote JWKS', () => {
    let server: Server;
    let baseUrl: string;
    let published: JSONWebKeySet;
    let status: number;
    let delayMs: number;
    let fetches: number;

    beforeAll(async () => {
      server = createServer((req, res) => {
        fetches += 1;
        setTimeout(() => {
          if (req.url !== '/.well-known/jwks.json') {
            res.writeHead(404).end();
            return;
          }
          res
            .writeHead(status, { 'content-type': 'application/json' })
            .end(JSON.stringify(published));
        }, delayMs);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    beforeEach(() => {
      published = jwksOf(rsa);
      status = 200;
      delayMs = 0;
      fetches = 0;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const remoteVerifier = (remote = {}) =>
      new JwtIdentityVerifier({
        jwks: `${baseUrl}/.well-known/jwks.json`,
        issuer: ISSUER,
        audience: AUDIENCE,
        remote,
      });

    it('fetches the key set once and verifies against it', async () => {
      const remote = remoteVerifier();
      await expect(remote.verify(await signToken(rsa))).resolves.toMatchObject({
        subject: 'player-123',
      });
      await expect(
        remote.verify(await signToken(rsa, { sub: 'player-456' })),
      ).resolves.toMatchObject({
        subject: 'player-456',
      });
      expect(fetches).toBe(1);
    });

    it('picks up a rotated key once the cooldown has passed, and not before', async () => {
      const remote = remoteVerifier({ cooldownMs: 200 });
      await remote.verify(await signToken(rsa));
      published = jwksOf(rsa, ec);
      await expectInvalid(remote, await signToken(ec), 'token signing key unknown');
      expect(fetches).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 250));
      await expect(remote.verify(await signToken(ec))).resolves.toMatchObject({
        subject: 'player-123',
      });
      expect(fetches).toBe(2);
    });

    it('reports an identity provider answering 500 as unavailable, not as a bad credential', async () => {
      status = 500;
      const err = await rejection(remoteVerifier().verify(await signToken(rsa)));
      expect(err).toBeInstanceOf(JwksUnavailableError);
      expect(err).not.toBeInstanceOf(InvalidCredentialError);
      // The API answers the code 503 (apps/api/src/http/http-answers.spec.ts).
      expect(err).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    });

    it('reports a JWKS fetch that times out as unavailable', async () => {
      delayMs = 500;
      const err = await rejection(remoteVerifier({ timeoutMs: 50 }).verify(await signToken(rsa)));
      expect(err).toBeInstanceOf(JwksUnavailableError);
      expect((err as JwksUnavailableError).reason).toBe('ERR_JWKS_TIMEOUT');
    });

    it('reports an unreachable identity provider as unavailable', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const unreachable = new JwtIdentityVerifier({
        jwks: `http://127.0.0.1:${port}/jwks.json`,
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      await expect(unreachable.verify(await signToken(rsa))).rejects.toBeInstanceOf(
        JwksUnavailableError,
      );
    });

    it('still rejects a bad token before asking for keys it does not need', async () => {
      await expectInvalid(remoteVerifier(), 'not-a-jwt', 'malformed token');
      expect(fetches).toBe(0);
    });
  });
});
