import type { ErrorCode, ProblemExtensions } from './error-codes';

/**
 * An error a service raises for the API to answer with: a stable code, the HTTP status, and a
 * message safe to show the caller. Mapped to problem+json by the API's one exception filter.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extras: {
      headers?: Record<string, string>;
      errors?: { field: string; problems: string[] }[];
      extensions?: ProblemExtensions;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
