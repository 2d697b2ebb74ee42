import { Injectable } from '@nestjs/common';
import {
  InvalidCredentialError,
  PlayerIdentityVerifier,
  type PlayerIdentity,
} from './player-identity.verifier';
import { DEVICE_SECRET_PREFIX, isSecretShape, secretHash } from './session-token';

/** Guests: no credential creates one; the device secret it was given resumes it. */
@Injectable()
export class GuestIdentityVerifier extends PlayerIdentityVerifier {
  readonly provider = 'guest';

  verify(credential: string | undefined): Promise<PlayerIdentity> {
    if (credential === undefined) return Promise.resolve({ kind: 'new-guest' });
    if (!isSecretShape(credential, DEVICE_SECRET_PREFIX)) {
      return Promise.reject(
        new InvalidCredentialError('the device secret is not one this service issued'),
      );
    }
    return Promise.resolve({ kind: 'device', deviceSecretHash: secretHash(credential) });
  }
}
