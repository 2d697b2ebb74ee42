import { MatchplaneApiError, MatchplaneNetworkError } from '@matchplane/sdk';

/** The roster may be missing for a moment (or the API restarting); a refusal is final. */
export function isTransient(error: unknown): boolean {
  return (
    isUnavailable(error) ||
    (error instanceof MatchplaneApiError && (error.status === 404 || error.status === 409))
  );
}

/** The control plane could not take a request just now; a 4xx other than 429 is its answer. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof MatchplaneNetworkError) return true;
  return error instanceof MatchplaneApiError && (error.status === 429 || error.status >= 500);
}

/** Error messages here never carry the credential: SDK errors name only method and path. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
