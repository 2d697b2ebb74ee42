import type { TransportRequest } from './http.transport';

/** A player API call; the client adds its session token. */
export type PlayerCall = Omit<TransportRequest, 'token'>;

/** How PlayerClient's sub-clients reach the API: with the client's transport and session token. */
export interface PlayerCalls {
  /** The parsed body, or undefined on 204. */
  send<T>(request: PlayerCall): Promise<T | undefined>;
  /** A call whose success always has a body; an empty one is thrown as a contract violation. */
  required<T>(request: PlayerCall): Promise<T>;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads every `pollMs` (default 500) until `pick` finds the answer in what was read; when the next
 * read would come past `timeoutMs` (default 30_000), throws `timedOut(the last read, timeoutMs)`.
 */
export async function pollUntil<T, R>(
  read: () => Promise<T>,
  pick: (read: T) => R | undefined,
  options: { timeoutMs?: number; pollMs?: number },
  timedOut: (last: T, timeoutMs: number) => Error,
): Promise<R> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pollMs = options.pollMs ?? 500;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await read();
    const picked = pick(last);
    if (picked !== undefined) return picked;
    if (Date.now() + pollMs > deadline) throw timedOut(last, timeoutMs);
    await sleep(pollMs);
  }
}
