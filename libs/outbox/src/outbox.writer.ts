import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OutboxEnvelope } from './envelope.builder';

/**
 * Appends envelopes to the outbox inside the caller's transaction. Envelopes can only come from
 * `buildEnvelope`, so a row that could never be delivered is never written; the table's own
 * CHECKs (revision >= 1, payload an object) are the last line.
 */
@Injectable()
export class OutboxWriter {
  async append(manager: EntityManager, envelopes: readonly OutboxEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return;
    const values: unknown[] = [];
    const tuples = envelopes.map((envelope, index) => {
      const base = index * 7;
      values.push(
        envelope.event,
        envelope.aggregateType,
        envelope.aggregateId,
        envelope.revision.toString(),
        envelope.occurredAt,
        envelope.playerIds,
        JSON.stringify(envelope.payload),
      );
      return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}::bigint, $${base + 5}, $${base + 6}::uuid[], $${base + 7}::jsonb)`;
    });
    await manager.query(
      `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload)
       VALUES ${tuples.join(', ')}`,
      values,
    );
  }
}
