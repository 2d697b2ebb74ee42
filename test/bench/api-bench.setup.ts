/*
 * bench:api's bulk set-up: queued players written through the production stores (PlayerStore,
 * SessionStore, TicketStore, and with them the candidate projection), many per transaction and a
 * few transactions at once, instead of three HTTP calls each. What a player ends with is what the
 * routes would have left: a guest player, a live session whose token the bench keeps, a SEARCHING
 * ticket with its `ticket.state_changed` envelope and its candidate in Redis. Latency samples are
 * not written: a ticket carries its predicted RTT, which is all a heartbeat reads.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { matcherShardPlan, type ServiceConfig } from '@matchplane/config';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { runInTransaction } from '@matchplane/persistence';
import {
  newSecret,
  PlayerStore,
  secretHash,
  SESSION_TOKEN_PREFIX,
  SessionStore,
} from '@matchplane/players';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';

export interface QueuedPlayer {
  token: string;
  ticketId: string;
}

/** Players per transaction, and transactions at once. */
const PER_TRANSACTION = 250;
const TRANSACTIONS_IN_FLIGHT = 4;

/**
 * Queues `count` players through the stores; `modeOf(i)` and `predictedRttOf(i)` say what each
 * queues for. Calls `onProgress` with the number queued so far after each transaction.
 */
export async function queuePlayersInBulk(
  dataSource: DataSource,
  redis: Redis,
  config: ServiceConfig,
  count: number,
  modeOf: (index: number) => string,
  predictedRttOf: (index: number) => Record<string, number>,
  onProgress: (queued: number) => void,
): Promise<QueuedPlayer[]> {
  const players = new PlayerStore();
  const sessions = new SessionStore(dataSource);
  const tickets = new TicketStore(
    new OutboxWriter(),
    new OutboxSignal(redis, config),
    new CandidateProjection(redis, config, config, matcherShardPlan(config)),
  );
  const expiresAt = new Date(Date.now() + 86_400_000);
  const queued: QueuedPlayer[] = [];
  let next = 0;
  const transaction = async (first: number, size: number): Promise<QueuedPlayer[]> =>
    runInTransaction(dataSource, (manager, unit) =>
      // The players of a transaction side by side: their statements go out pipelined on its
      // connection (DATABASE_PIPELINING) instead of a round trip each.
      Promise.all(
        Array.from({ length: size }, async (_, offset): Promise<QueuedPlayer> => {
          const index = first + offset;
          const playerId = await players.createGuest(
            manager,
            secretHash(randomBytes(32).toString('hex')),
          );
          const token = newSecret(SESSION_TOKEN_PREFIX);
          await sessions.create(manager, playerId, secretHash(token), expiresAt);
          const ticketId = randomUUID();
          await tickets.create(
            unit,
            {
              id: ticketId,
              playerId,
              mode: modeOf(index),
              rating: 1500,
              predictedRtt: predictedRttOf(index),
            },
            new Date(),
          );
          return { token, ticketId };
        }),
      ),
    );
  await Promise.all(
    Array.from({ length: TRANSACTIONS_IN_FLIGHT }, async () => {
      while (next < count) {
        const first = next;
        const size = Math.min(PER_TRANSACTION, count - first);
        next += size;
        queued.push(...(await transaction(first, size)));
        onProgress(queued.length);
      }
    }),
  );
  return queued;
}
