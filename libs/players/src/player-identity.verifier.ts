import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/**
 * Who a session is for, as an identity verifier established it. `device` is a guest resuming
 * with its device secret (kept only as a hash); `new-guest` asks for a fresh guest player;
 * `external` is an identity provider's subject (e.g. a JWT's iss-scoped `sub`).
 */
export type PlayerIdentity =
  | { readonly kind: 'new-guest' }
  | { readonly kind: 'device'; readonly deviceSecretHash: Buffer }
  | { readonly kind: 'external'; readonly provider: string; readonly subject: string };

/** The credential could not be verified (INVALID_CREDENTIAL); the message says why, for the caller too. */
export class InvalidCredentialError extends CodedError<typeof ErrorCode.INVALID_CREDENTIAL> {
  override name = 'InvalidCredentialError';

  constructor(message: string) {
    super(ErrorCode.INVALID_CREDENTIAL, message);
  }
}

/**
 * The seam a studio plugs its identity provider into: register a provider of
 * PLAYER_IDENTITY_VERIFIERS (multi) from its own module. `provider` is the value clients send
 * in `POST /v1/sessions {provider}`.
 */
export abstract class PlayerIdentityVerifier {
  abstract readonly provider: string;
  /** Resolves the identity, or throws InvalidCredentialError. Never logs the credential. */
  abstract verify(credential: string | undefined): Promise<PlayerIdentity>;
}

/** Injection token of the list of verifiers the session service chooses from by `provider`. */
export const PLAYER_IDENTITY_VERIFIERS = Symbol('PLAYER_IDENTITY_VERIFIERS');
