/** The BullMQ queue that carries claimed outbox rows to delivery workers. */
export const DELIVERY_QUEUE = 'outbox-delivery';

export const DELIVERY_JOB = 'deliver';

/** Job id = outbox id, so a row re-enqueued by a second relay or the auditor is deduplicated. */
export interface DeliveryJobData {
  outboxId: string;
  aggregateId: string;
}

/** BullMQ refuses integer-like custom ids, so the outbox id is prefixed. */
export function deliveryJobId(outboxId: string): string {
  return `outbox-${outboxId}`;
}
