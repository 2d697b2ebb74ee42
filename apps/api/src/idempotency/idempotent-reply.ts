import type { FastifyReply } from 'fastify';
import type { IdempotentOutcome } from '@matchplane/idempotency';

/** Sends an idempotent mutation's stored (or fresh) status; a replay says so in a header. */
export function sendIdempotent<T>(reply: FastifyReply, outcome: IdempotentOutcome<T>): T {
  void reply.status(outcome.status);
  if (outcome.replayed) void reply.header('idempotent-replayed', 'true');
  return outcome.body;
}
