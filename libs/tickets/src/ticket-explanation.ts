/**
 * Where the matcher leaves its last explanation of why a ticket is still searching (JSON
 * `{code, message, evaluatedAt}`, with a TTL); the API shows it on GET /v1/queue/tickets/{id}.
 * Here so that both apps read one definition (apps never import each other).
 */
export function ticketExplanationKey(prefix: string, ticketId: string): string {
  return `${prefix}:explanation:${ticketId}`;
}
