import { readFileSync } from 'node:fs';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import {
  InvalidCredentialError,
  PlayerIdentityVerifier,
  type PlayerIdentity,
} from './player-identity.verifier';

/** Asymmetric signature algorithms only: a JWKS is public, so an HMAC "key" in it would be a shared secret. */
const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]);

export const DEFAULT_JWT_ALGORITHMS: readonly string[] = ['RS256', 'ES256', 'EdDSA'];
export const MAX_JWT_SUBJECT_LENGTH = 255;
/** Far above any real ID token; bounds the work an anonymous caller can ask of us. */
export const MAX_JWT_LENGTH = 16_384;
/** JWK members that only private (or symmetric) keys carry. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

export interface RemoteJwksOptions {
  /** Abort a JWKS fetch after this long (ms). Default 5_000. */
  timeoutMs?: number;
  /**
   * After a fetch, an unknown `kid` does not trigger another one for this long (ms), so a flood of
   * forged kids cannot hammer the identity provider. Default 30_000.
   */
  cooldownMs?: number;
  /** Refetch at least this often (ms), picking up rotated keys. Default 600_000. */
  cacheMaxAgeMs?: number;
}

export interface JwtIdentityVerifierOptions {
  /** The identity provider's JWKS: its URL (fetched and cached), or the key set itself. */
  jwks: string | URL | JSONWebKeySet;
  /** Required `iss`; also scopes the identities this verifier produces. */
  issuer: string;
  /** Required `aud` (any one of them, if several). */
  audience: string | readonly string[];
  /** Accepted `alg` values. Default RS256, ES256, EdDSA; `none` and HMAC are refused. */
  algorithms?: readonly string[];
  /** Leeway for `exp`/`nbf` against clock skew. Default 30. */
  clockToleranceSeconds?: number;
  /** What clients send as `provider` in `POST /v1/sessions`. Default "jwt". */
  providerName?: string;
  remote?: RemoteJwksOptions;
}

/** The ApiConfig fields `fromConfig` reads (ApiConfig itself satisfies this). */
export interface JwtIdentityConfig {
  PLAYER_JWT_JWKS_URL?: string;
  PLAYER_JWT_JWKS_FILE?: string;
  PLAYER_JWT_ISSUER?: string;
  PLAYER_JWT_AUDIENCE?: string;
}

/**
 * The identity provider could not be asked for its keys (timeout, non-200, unparsable JWKS,
 * connection refused). Not the caller's fault, so not a 401 (the client would discard a good
 * credential): DEPENDENCY_UNAVAILABLE (the API answers 503).
 * `reason` is for the log; the message is all the caller sees.
 */
export class JwksUnavailableError extends CodedError<typeof ErrorCode.DEPENDENCY_UNAVAILABLE> {
  constructor(readonly reason: string) {
    super(ErrorCode.DEPENDENCY_UNAVAILABLE, 'identity provider unavailable, try again shortly');
    this.name = 'JwksUnavailableError';
  }
}

/**
 * Verifies an identity provider's signed JWT against its JWKS and yields the `external` identity
 * `{provider: "jwt:" + iss, subject: sub}`.
 *
 * The identity's provider is derived from the issuer, not from `providerName`: OIDC guarantees
 * `sub` unique only per issuer, so two issuers' subjects never map to one player, and renaming the
 * client-facing provider name does not orphan existing players.
 */
export class JwtIdentityVerifier extends PlayerIdentityVerifier {
  readonly provider: string;
  /** The `provider` of every identity this verifier yields. */
  readonly identityProvider: string;
  private readonly keys: JWTVerifyGetKey;
  private readonly issuer: string;
  private readonly audience: string[];
  private readonly algorithms: string[];
  private readonly clockToleranceSeconds: number;

  constructor(options: JwtIdentityVerifierOptions) {
    super();
    const issuer = options.issuer?.trim();
    if (!issuer) throw new Error('JwtIdentityVerifier: issuer is required');
    const audience = (
      typeof options.audience === 'string' ? [options.audience] : [...options.audience]
    )
      .map((a) => a.trim())
      .filter((a) => a.length > 0);
    if (audience.length === 0) throw new Error('JwtIdentityVerifier: audience is required');
    const algorithms = [...(options.algorithms ?? DEFAULT_JWT_ALGORITHMS)];
    if (algorithms.length === 0) {
      throw new Error('JwtIdentityVerifier: algorithms must not be empty');
    }
    const refused = algorithms.filter((alg) => !ASYMMETRIC_ALGORITHMS.has(alg));
    if (refused.length > 0) {
      throw new Error(
        `JwtIdentityVerifier: algorithms ${refused.join(', ')} not allowed (asymmetric JWS algorithms only)`,
      );
    }
    const clockToleranceSeconds = options.clockToleranceSeconds ?? 30;
    if (!Number.isFinite(clockToleranceSeconds) || clockToleranceSeconds < 0) {
      throw new Error('JwtIdentityVerifier: clockToleranceSeconds must be a non-negative number');
    }
    const provider = options.providerName ?? 'jwt';
    if (!provider.trim()) throw new Error('JwtIdentityVerifier: providerName must not be empty');

    this.provider = provider;
    this.identityProvider = `jwt:${issuer}`;
    this.issuer = issuer;
    this.audience = audience;
    this.algorithms = algorithms;
    this.clockToleranceSeconds = clockToleranceSeconds;
    this.keys = JwtIdentityVerifier.keySet(options.jwks, options.remote ?? {});
  }

  /**
   * The verifier ApiConfig asks for: undefined when no PLAYER_JWT_* variable is set; throws when
   * only some are, so a half-configured provider refuses to start instead of rejecting every player.
   */
  static fromConfig(
    config: JwtIdentityConfig,
    overrides: Omit<JwtIdentityVerifierOptions, 'jwks' | 'issuer' | 'audience'> = {},
  ): JwtIdentityVerifier | undefined {
    const url = blankToUndefined(config.PLAYER_JWT_JWKS_URL);
    const file = blankToUndefined(config.PLAYER_JWT_JWKS_FILE);
    const issuer = blankToUndefined(config.PLAYER_JWT_ISSUER);
    const audience = blankToUndefined(config.PLAYER_JWT_AUDIENCE);
    if (url === undefined && file === undefined && issuer === undefined && audience === undefined) {
      return undefined;
    }

    if (url !== undefined && file !== undefined) {
      throw new Error('JWT players: set PLAYER_JWT_JWKS_URL or PLAYER_JWT_JWKS_FILE, not both');
    }
    const source = url ?? file;
    const missing = [
      ...(source === undefined ? ['PLAYER_JWT_JWKS_URL or PLAYER_JWT_JWKS_FILE'] : []),
      ...(issuer === undefined ? ['PLAYER_JWT_ISSUER'] : []),
      ...(audience === undefined ? ['PLAYER_JWT_AUDIENCE'] : []),
    ];
    if (source === undefined || issuer === undefined || audience === undefined) {
      throw new Error(`JWT players are partly configured: missing ${missing.join(', ')}`);
    }
    const jwks = url !== undefined ? url : readJwksFile(source);
    return new JwtIdentityVerifier({ ...overrides, jwks, issuer, audience });
  }

  async verify(credential: string | undefined): Promise<PlayerIdentity> {
    if (credential === undefined || credential.length === 0) {
      throw new InvalidCredentialError('missing credential');
    }
    if (credential.length > MAX_JWT_LENGTH) throw new InvalidCredentialError('credential too long');

    let payload: { sub?: unknown };
    try {
      ({ payload } = await jwtVerify(credential, this.keys, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: this.algorithms,
        clockTolerance: this.clockToleranceSeconds,
        // A token without expiry would be a password that never changes.
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw translateVerifyError(err);
    }

    const { sub } = payload;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_JWT_SUBJECT_LENGTH) {
      throw new InvalidCredentialError('token has no valid subject');
    }
    return { kind: 'external', provider: this.identityProvider, subject: sub };
  }

  private static keySet(
    jwks: JwtIdentityVerifierOptions['jwks'],
    remote: RemoteJwksOptions,
  ): JWTVerifyGetKey {
    if (typeof jwks === 'string' || jwks instanceof URL) {
      const url = new URL(jwks);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new Error(`JwtIdentityVerifier: JWKS URL must be http(s), got ${url.protocol}`);
      }
      return createRemoteJWKSet(url, {
        timeoutDuration: remote.timeoutMs ?? 5_000,
        cooldownDuration: remote.cooldownMs ?? 30_000,
        cacheMaxAge: remote.cacheMaxAgeMs ?? 600_000,
      });
    }
    assertPublicJwks(jwks);
    // Throws at once on a malformed set, so a bad file fails start-up.
    return createLocalJWKSet(jwks);
  }
}

/**
 * Maps jose's failure to a short message safe to return to the caller. The jose error is not
 * kept as `cause`: its claim errors carry the token's payload, which must not reach a log.
 */
function translateVerifyError(err: unknown): Error {
  if (err instanceof errors.JWTExpired) return new InvalidCredentialError('token expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'iss':
        return new InvalidCredentialError('unexpected token issuer');
      case 'aud':
        return new InvalidCredentialError('unexpected token audience');
      case 'nbf':
        return new InvalidCredentialError('token not yet valid');
      case 'exp':
        return new InvalidCredentialError('token has no expiry');
      default:
        return new InvalidCredentialError('token claims invalid');
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return new InvalidCredentialError('token algorithm not allowed');
  }
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return new InvalidCredentialError('token signing key unknown');
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return new InvalidCredentialError('token signature invalid');
  }
  if (
    err instanceof errors.JWSInvalid ||
    err instanceof errors.JWTInvalid ||
    err instanceof errors.JWKInvalid
  ) {
    return new InvalidCredentialError('malformed token');
  }
  // What is left is fetching the key set: JWKSTimeout, JWKSInvalid, the generic non-200/unparsable
  // JOSEError, or a socket error from node:http.
  const reason =
    err instanceof errors.JOSEError
      ? err.code
      : String((err as { message?: unknown } | undefined)?.message ?? err);
  return new JwksUnavailableError(reason);
}

function assertPublicJwks(jwks: JSONWebKeySet): void {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) {
    throw new Error('JwtIdentityVerifier: JWKS must be an object with a "keys" array');
  }
  jwks.keys.forEach((key: unknown, index) => {
    if (typeof key !== 'object' || key === null) {
      throw new Error(`JwtIdentityVerifier: JWKS key ${index} is not an object`);
    }
    const leaked = PRIVATE_JWK_MEMBERS.filter((member) => member in key);
    if (leaked.length > 0) {
      throw new Error(
        `JwtIdentityVerifier: JWKS key ${index} carries private or symmetric key material (${leaked.join(', ')}); publish public keys only`,
      );
    }
  });
}

function readJwksFile(path: string): JSONWebKeySet {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`PLAYER_JWT_JWKS_FILE ${path} cannot be read: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as JSONWebKeySet;
  } catch {
    // No parser message: it would quote the file's content.
    throw new Error(`PLAYER_JWT_JWKS_FILE ${path} is not valid JSON`);
  }
}

function blankToUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
