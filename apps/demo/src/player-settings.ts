import type { QueueOptionsResponse } from '@matchplane/contracts';
import type { SimulatedLocation } from './locations';

/** What a simulated player is given, and what it reports when its match is over. */
export interface PlayerSettings {
  readonly label: string;
  readonly location: SimulatedLocation;
  /** Edge origin -> the origin of this player's city's proxy in front of it (CityNetwork). */
  readonly edgeRoutes: Readonly<Record<string, string>>;
  readonly apiUrl: string;
  readonly mode: string;
  readonly options: QueueOptionsResponse;
  /** Probe round trips per region. */
  readonly samples: number;
  /** How long the player waits in the queue for a match. */
  readonly matchTimeoutMs: number;
  /** The game's length, to bound the wait for its end. */
  readonly matchDurationMs: number;
  /**
   * `no-show`: takes its assignment but never connects. `late`: queues while a match is short of
   * a no-show and is backfilled into it, so it joins once the game server accepted the backfill.
   */
  readonly role?: 'no-show' | 'late' | 'drops';
  /** The mode has a ready check: the player accepts its match when notified. */
  readonly readyCheck?: boolean;
}

export interface PlayerOutcome {
  readonly matchId: string;
  readonly team: number;
  /** False for a no-show. */
  readonly won: boolean;
}
