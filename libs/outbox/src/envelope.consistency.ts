import { isUuid } from '@matchplane/domain';
import type { EnvelopeProblem } from './events.schemas';
import type { EventPayloads, EventType } from './events';
import type { Revision } from './envelope.types';

/* What ties an envelope's fields to its payload: the aggregate id, the creation revision, the audience. */

/** The payload field that names the event's aggregate, and its value. */
function aggregateIdField(event: EventType, payload: EventPayloads[EventType]): [string, unknown] {
  switch (event) {
    case 'match.state_changed':
    case 'match.participants_added':
    case 'match.presence_changed':
      return ['payload.matchId', (payload as EventPayloads[typeof event]).matchId];
    case 'ticket.state_changed':
      return ['payload.ticketId', (payload as EventPayloads[typeof event]).ticketId];
    case 'rating.updated':
      return ['payload.playerId', (payload as EventPayloads[typeof event]).playerId];
    case 'backfill.state_changed':
      return ['payload.requestId', (payload as EventPayloads[typeof event]).requestId];
  }
}

export function crossProblems(
  event: EventType,
  payload: EventPayloads[EventType],
  aggregateId: unknown,
  revision: Revision | undefined,
  playerIds: readonly unknown[],
): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const [idField, payloadId] = aggregateIdField(event, payload);
  if (isUuid(aggregateId) && payloadId !== aggregateId) {
    problems.push({
      field: idField,
      message: `must equal aggregateId ${aggregateId}, got ${String(payloadId)}`,
    });
  }
  // A state change's first revision is its creation; a rating has no creation event.
  if (revision !== undefined && 'from' in payload) {
    const first = revision === 1;
    if (payload.from === null && !first) {
      problems.push({
        field: 'revision',
        message: `must be 1 for a creation (from: null), got ${revision}`,
      });
    } else if (payload.from !== null && first) {
      problems.push({
        field: 'payload.from',
        message: `revision 1 is the creation, so from must be null, got ${payload.from}`,
      });
    }
  }
  switch (event) {
    case 'match.state_changed':
    case 'match.participants_added':
    case 'match.presence_changed': {
      const participants = (payload as EventPayloads[typeof event]).participants.map(
        (p) => p.playerId,
      );
      const addressed = new Set(playerIds);
      const missing = participants.filter((id) => !addressed.has(id));
      const strangers = playerIds.filter((id) => !participants.includes(id as string));
      if (missing.length > 0) {
        problems.push({
          field: 'playerIds',
          message: `must include every participant; missing ${missing.join(', ')}`,
        });
      }
      if (strangers.length > 0) {
        problems.push({
          field: 'playerIds',
          message: `must name only participants; not in the match: ${strangers.join(', ')}`,
        });
      }
      break;
    }
    case 'ticket.state_changed':
      if (playerIds.length !== 1) {
        problems.push({
          field: 'playerIds',
          message: `a ticket event concerns its player alone, got ${playerIds.length} players`,
        });
      }
      break;
    case 'rating.updated':
      if (playerIds.length !== 1 || playerIds[0] !== payloadId) {
        problems.push({
          field: 'playerIds',
          message: `a rating event concerns its player alone (${String(payloadId)})`,
        });
      }
      break;
    case 'backfill.state_changed': {
      const addressed = new Set(playerIds);
      const added = (payload as EventPayloads[typeof event]).playerIds;
      if (!added.every((id) => addressed.has(id))) {
        problems.push({
          field: 'playerIds',
          message: 'must include every player the request added',
        });
      }
      break;
    }
  }
  return problems;
}
