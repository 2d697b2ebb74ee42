import type { EntityManager } from 'typeorm';
import type { AggregateType } from '@matchplane/domain';
import { validateEnvelope, type OutboxEnvelope } from './envelope.builder';
import { OUTBOX_COLUMNS, type OutboxRow } from './outbox.row';

/**
 * One aggregate's events still retained in the outbox, in revision order, after `afterRevision`,
 * each re-validated (the aggregate type is a literal of the type union, as before the move): the outbox's statement behind an owner's history (MatchStore.history).
 */
export async function retainedEvents(
  queryable: Pick<EntityManager, 'query'>,
  aggregateType: AggregateType,
  aggregateId: string,
  afterRevision: number,
): Promise<OutboxEnvelope[]> {
  const rows = await queryable.query<OutboxRow[]>(
    `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE aggregate_type = '${aggregateType}' AND aggregate_id = $1 AND revision > $2 ORDER BY revision`,
    [aggregateId, afterRevision],
  );
  return rows.map(validateEnvelope);
}
