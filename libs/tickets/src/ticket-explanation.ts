import type Redis from 'ioredis';
import type { TicketExplanation } from '@matchplane/contracts';

/**
 * Where the matcher leaves its last explanation of why a ticket is still searching (JSON
 * `{code, message, evaluatedAt}`, with a TTL); the API shows it on GET /v1/queue/tickets/{id}.
 * Here so that both apps read one definition (apps never import each other).
 */
export function ticketExplanationKey(prefix: string, ticketId: string): string {
  return `${prefix}:explanation:${ticketId}`;
}

/** The matcher's last explanation of a searching ticket; undefined when none (or Redis is down: it is advice). */
export async function readTicketExplanation(
  redis: Redis,
  prefix: string,
  ticketId: string,
): Promise<TicketExplanation | undefined> {
  const raw = await redis.get(ticketExplanationKey(prefix, ticketId)).catch(() => null);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as TicketExplanation;
  } catch {
    return undefined;
  }
}
