import type { JoinMessage } from '@matchplane/contracts';

/*
 * The server's side of the join protocol; its messages and close codes are defined once, in
 * libs/contracts join-protocol.ts.
 */

/** The join message in `data`, or undefined when it is anything else. */
export function parseJoinMessage(data: string): JoinMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const message = parsed as Record<string, unknown>;
  if (message.type !== 'join' || typeof message.token !== 'string' || message.token === '') {
    return undefined;
  }
  return { type: 'join', token: message.token };
}
