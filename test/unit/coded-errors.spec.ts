import * as allocation from '@matchplane/allocation';
import * as config from '@matchplane/config';
import * as domain from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import * as joinAuth from '@matchplane/join-auth';
import * as matches from '@matchplane/matches';
import * as outbox from '@matchplane/outbox';
import * as persistence from '@matchplane/persistence';
import * as players from '@matchplane/players';
import * as tickets from '@matchplane/tickets';

/**
 * Errors the server libraries export that no request or command reaches as such, each with where
 * it ends instead. Every other exported error must be a CodedError, so the API (HTTP_ANSWERS) and
 * the CLIs (CLI_EXIT_CODES) answer it by its code.
 */
const NOT_FOR_CALLERS: Record<string, string> = {
  ConfigError: 'start-up: loadConfigOrExit prints its line and exits 1',
  SubscriberRegistrationError: 'start-up: the dispatcher refuses to start',
  PermanentDeliveryError: "a subscriber's verdict, read by the dispatcher (dead-letters the row)",
  ServerBusyError: 'the allocator takes the next static server',
  JoinAuthError: "join-auth's own codes: the game server closes the socket 4401 with the code",
  JoinAuthRejectedError:
    "join-auth's own codes: the game server closes the socket 4401 with the code",
  DatabaseHostUnavailableError:
    "a connection error like the driver's: the problem filter answers 503 DEPENDENCY_UNAVAILABLE",
};

const libraries = {
  allocation,
  config,
  domain,
  joinAuth,
  matches,
  outbox,
  persistence,
  players,
  tickets,
};

const exportedErrors = Object.entries(libraries).flatMap(([library, exports]) =>
  Object.entries(exports as Record<string, unknown>)
    .filter(
      (entry): entry is [string, new (...args: never[]) => Error] =>
        typeof entry[1] === 'function' &&
        (entry[1] as { prototype?: unknown }).prototype instanceof Error,
    )
    .map(([name, errorClass]) => [`${library}.${name}`, name, errorClass] as const),
);

describe('library errors', () => {
  it('finds the errors the libraries export', () => {
    expect(exportedErrors.map(([qualified]) => qualified)).toEqual(
      expect.arrayContaining([
        'domain.DomainError',
        'matches.StaleMatchRevisionError',
        'persistence.TransactionRetriesExhaustedError',
      ]),
    );
  });

  it.each(exportedErrors)(
    '%s carries a code or says where it ends',
    (_qualified, name, errorClass) => {
      if (errorClass.prototype instanceof CodedError) return;
      expect(NOT_FOR_CALLERS[name]).toEqual(expect.any(String));
    },
  );
});
