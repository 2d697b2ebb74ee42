import { Logger } from '@nestjs/common';
import { MatchplaneApiError, type ServerClient } from '@matchplane/sdk';
import type { PresenceReporter } from './join.listener';

/**
 * Reports joined players' leaves and rejoins to the control plane, in order per player (a rejoin
 * reported before its leave would be refused as a conflict). A failed report is logged and the
 * next goes on: the control plane's grace window, not this server, decides who abandoned.
 */
export class ControlPlanePresenceReporter implements PresenceReporter {
  private readonly logger = new Logger(ControlPlanePresenceReporter.name);
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(private readonly client: Pick<ServerClient, 'playerLeft' | 'playerRejoined'>) {}

  left(playerId: string): void {
    void this.after(playerId, async () => {
      const answer = await this.client.playerLeft(playerId);
      this.logger.log(`player ${playerId} left; may rejoin until ${answer.rejoinDeadline ?? '-'}`);
    }).catch((error: unknown) =>
      this.logger.warn(`leave of ${playerId} not reported: ${describe(error)}`),
    );
  }

  rejoined(playerId: string): Promise<boolean> {
    return this.after(playerId, async () => {
      await this.client.playerRejoined(playerId);
      return true;
    }).catch((error: unknown) => {
      if (error instanceof MatchplaneApiError && error.code === 'PLAYER_ABANDONED') return false;
      this.logger.warn(`rejoin of ${playerId} not reported: ${describe(error)}`);
      return true;
    });
  }

  /** Runs `report` once the player's earlier reports settled. */
  private after<T>(playerId: string, report: () => Promise<T>): Promise<T> {
    const earlier = this.pending.get(playerId) ?? Promise.resolve();
    const next = earlier.then(report, report);
    this.pending.set(
      playerId,
      next.catch(() => undefined),
    );
    return next;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
