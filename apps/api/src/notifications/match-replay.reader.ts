import { Injectable } from '@nestjs/common';
import {
  ResyncReason,
  type MatchEventMessage,
  type MatchEventsResponse,
  type ResyncMessage,
} from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { matchStateAfter } from '@matchplane/domain';

/**
 * What a client that has seen a match up to some revision is missing, from the match's retained
 * outbox rows: the same answer for a resuming socket and for `GET /v1/matches/{id}/events`.
 */
@Injectable()
export class MatchReplayReader {
  constructor(private readonly matches: MatchStore) {}

  /** The player's matches not yet in a terminal state, for a socket that just connected (see MatchStore). */
  liveMatchesOf(playerId: string): Promise<string[]> {
    return this.matches.liveMatchesOf(playerId);
  }

  /** The matches of these players whose state changed since `since` (see MatchStore). */
  recentMatchesOf(
    playerIds: readonly string[],
    since: Date,
  ): Promise<{ playerId: string; matchId: string }[]> {
    return this.matches.recentMatchesOf(playerIds, since);
  }

  /**
   * The events after `after`, or, when they are no longer all retained, a resync with the match's
   * current state followed by anything newer. Undefined when the match does not exist or the
   * player is not part of it (one answer for both, so match ids cannot be probed).
   */
  async after(
    playerId: string,
    matchId: string,
    after: number,
  ): Promise<MatchEventsResponse | undefined> {
    const match = await this.matches.load(undefined, matchId);
    if (!match?.participants.some((participant) => participant.playerId === playerId)) {
      return undefined;
    }
    // Read after the row: every revision up to match.revision committed before it, so a missing
    // one was purged, not merely in flight.
    const history = await this.matches.history(matchId, after);
    const events = history.map((event): MatchEventMessage => ({
      type: 'event',
      event: event.event,
      matchId,
      revision: Number(event.revision),
      state: matchStateAfter(event),
      ...(event.payload.serverRegion === undefined
        ? {}
        : { serverRegion: event.payload.serverRegion }),
      occurredAt: event.occurredAt.toISOString(),
    }));
    const base = { matchId, state: match.state, revision: match.revision };
    if (after <= match.revision) {
      const run = consecutive(events, after);
      if (run.length >= match.revision - after) return { ...base, messages: run };
    }
    const resync: ResyncMessage = {
      type: 'resync',
      matchId,
      state: match.state,
      revision: match.revision,
      reason:
        after > match.revision ? ResyncReason.UNKNOWN_REVISION : ResyncReason.RETENTION_EXPIRED,
    };
    return { ...base, messages: [resync, ...consecutive(events, match.revision)] };
  }
}

/** The leading events that continue `from` without a gap. */
function consecutive(events: readonly MatchEventMessage[], from: number): MatchEventMessage[] {
  const run: MatchEventMessage[] = [];
  for (const event of events) {
    if (event.revision <= from + run.length) continue;
    if (event.revision !== from + run.length + 1) break;
    run.push(event);
  }
  return run;
}
