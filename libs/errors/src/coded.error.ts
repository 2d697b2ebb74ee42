import type { ProblemExtensions } from '@matchplane/contracts';
import type { AnyErrorCode } from './error-codes';

/** What a coded error may carry besides its code and message, each rendered by the transport. */
export interface CodedErrorExtras {
  /** Per-field problems of invalid input. */
  errors?: { field: string; problems: string[] }[];
  /** Members of the problem beyond the standard ones (e.g. `matchState`). */
  extensions?: ProblemExtensions;
  /** Seconds after which trying again may succeed (HTTP: `Retry-After`). */
  retryAfterSeconds?: number;
  /** How to authenticate (HTTP: `WWW-Authenticate`), on an authentication failure. */
  challenge?: string;
}

/**
 * The error libraries and services throw for a caller to act on: a stable code and a message safe
 * to show that caller. What a code means to a transport (an HTTP status and problem type, a CLI's
 * exit code) is decided by that transport's one mapping, never at the throw.
 */
export class CodedError<Code extends AnyErrorCode = AnyErrorCode> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly extras: CodedErrorExtras = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CodedError';
  }
}
