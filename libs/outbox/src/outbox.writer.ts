import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { activeTraceparent } from '@matchplane/observability';
import type { OutboxEnvelope } from './envelope.builder';

/** SQL and its parameters, for the caller to embed in a statement of its own. */
export interface SqlFragment {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * Appends envelopes to the outbox inside the caller's transaction. Envelopes can only come from
 * `buildEnvelope`, so a row that could never be delivered is never written; the table's own
 * CHECKs (revision >= 1, payload an object) are the last line.
 */
@Injectable()
export class OutboxWriter {
  async append(manager: EntityManager, envelopes: readonly OutboxEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return;
    const insert = this.appendSql(envelopes, []);
    await manager.query(insert.sql, [...insert.parameters]);
  }

  /**
   * The INSERT of `envelopes` for a writer to put in its own statement as a CTE, so that its
   * change and its events are one statement (one round trip, and atomic without a transaction
   * around them). `statementParameters`: the writer's own parameters, which the fragment's
   * follow (pass them as `[...statementParameters, ...fragment.parameters]`). With `onlyIf`, the
   * name of an earlier CTE, the rows are inserted only when that CTE returned a row: an optimistic
   * `UPDATE ... WHERE revision = $n RETURNING ...` that matched nothing appends nothing.
   */
  appendSql(
    envelopes: readonly OutboxEnvelope[],
    statementParameters: readonly unknown[],
    onlyIf?: string,
  ): SqlFragment {
    if (envelopes.length === 0) throw new Error('appendSql needs at least one envelope');
    const firstParameter = statementParameters.length + 1;
    const parameters: unknown[] = [];
    // One trace context for every row of the statement: the writer's active span (null when
    // nothing is traced), so the dispatcher's delivery continues the trace that wrote the row.
    const traceparent = `$${firstParameter + envelopes.length * 7}::text`;
    const tuples = envelopes.map((envelope, index) => {
      const base = firstParameter + index * 7;
      parameters.push(
        envelope.event,
        envelope.aggregateType,
        envelope.aggregateId,
        envelope.revision.toString(),
        envelope.occurredAt,
        envelope.playerIds,
        JSON.stringify(envelope.payload),
      );
      return `($${base}, $${base + 1}, $${base + 2}::uuid, $${base + 3}::bigint, $${base + 4}::timestamptz, $${base + 5}::uuid[], $${base + 6}::jsonb, ${traceparent})`;
    });
    parameters.push(activeTraceparent());
    const columns =
      'event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload, traceparent';
    const sql = onlyIf
      ? `INSERT INTO outbox (${columns})
         SELECT * FROM (VALUES ${tuples.join(', ')}) AS e(${columns})
          WHERE EXISTS (SELECT 1 FROM ${onlyIf})`
      : `INSERT INTO outbox (${columns}) VALUES ${tuples.join(', ')}`;
    return { sql, parameters };
  }
}
