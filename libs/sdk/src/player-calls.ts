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
