import { Injectable } from '@nestjs/common';
import { PlayerBlocks } from '@matchplane/players';
import { TicketArrivals, type QueueArrival } from '@matchplane/tickets';

/** One capture line: the arrival, and the player's block and avoid lists when it has any. */
export interface CapturedArrival extends QueueArrival {
  blockedPlayerIds?: string[];
  avoidedPlayerIds?: string[];
}

export interface CapturedArrivalPage {
  arrivals: CapturedArrival[];
  nextCursor: string | null;
}

/**
 * The operator's capture of queue arrivals for `npm run simulate` (docs/SIMULATOR.md): libs/tickets'
 * arrivals with each player's own block and avoid lists from libs/players, so a replay keeps
 * apart (or prefers apart) whom the matcher did. The lists are as they stand at the export, not
 * as they stood when the ticket queued (`player_blocks` keeps no history).
 */
@Injectable()
export class QueueCaptureAdmin {
  constructor(
    private readonly arrivals: TicketArrivals,
    private readonly blocks: PlayerBlocks,
  ) {}

  async page(
    range: { from: Date; until: Date },
    limit: number,
    cursor?: string,
  ): Promise<CapturedArrivalPage> {
    const page = await this.arrivals.page(range, limit, cursor);
    const lists = await this.blocks.listsOf([
      ...new Set(page.arrivals.map((arrival) => arrival.playerId)),
    ]);
    const arrivals = page.arrivals.map((arrival) => {
      const blocked = lists.blocked.get(arrival.playerId);
      const avoided = lists.avoided.get(arrival.playerId);
      return {
        ...arrival,
        ...(blocked ? { blockedPlayerIds: blocked } : {}),
        ...(avoided ? { avoidedPlayerIds: avoided } : {}),
      };
    });
    return { arrivals, nextCursor: page.nextCursor };
  }
}
