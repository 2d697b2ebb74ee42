/** The BullMQ queue that carries claimed outbox rows to delivery workers. */
export const DELIVERY_QUEUE = 'outbox-delivery';

export const DELIVERY_JOB = 'deliver';

/** One job per claim (see claimJobId in the dispatcher): a re-enqueued claim is deduplicated. */
export interface DeliveryJobData {
  outboxId: string;
  aggregateId: string;
}

/** BullMQ refuses integer-like custom ids, so the outbox id is prefixed. */
export function deliveryJobId(outboxId: string): string {
  return `outbox-${outboxId}`;
}
