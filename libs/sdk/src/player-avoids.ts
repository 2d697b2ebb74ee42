import { PlayerRoutes, type AvoidListResponse } from '@matchplane/contracts';
import type { PlayerCalls } from './player-calls';

/**
 * A player's avoid list: `client.avoids.add(playerId)`. The matcher puts a player in one match
 * with one it avoids, or that avoids it, only when nothing else fits (block lists, on the client
 * itself, keep two players apart always). Every call answers the list; refusals
 * (VALIDATION_FAILED, PLAYER_NOT_FOUND, AVOID_LIST_FULL) are thrown as MatchplaneApiError.
 */
export class AvoidListCalls {
  constructor(private readonly calls: PlayerCalls) {}

  /** The players this player avoids (oldest first) and how many the list may hold. */
  list(): Promise<AvoidListResponse> {
    return this.calls.required({ method: 'GET', path: PlayerRoutes.avoids, retry: 'safe' });
  }

  /** A repeat changes nothing; a blocked player moves to this list. */
  add(playerId: string): Promise<AvoidListResponse> {
    return this.calls.required({
      method: 'PUT',
      path: PlayerRoutes.avoid(playerId),
      retry: 'safe',
    });
  }

  /** One not on the list changes nothing. */
  remove(playerId: string): Promise<AvoidListResponse> {
    return this.calls.required({
      method: 'DELETE',
      path: PlayerRoutes.avoid(playerId),
      retry: 'safe',
    });
  }
}
