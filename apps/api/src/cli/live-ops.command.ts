import { Global, Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  MATCHER_SHARD_PLAN,
  matcherShardPlan,
  QueueWaitEstimateWindow,
  TicketHeartbeatTimeout,
} from '@matchplane/config';
import { PersistenceModule, RedisModule } from '@matchplane/persistence';
import { LiveOpsModule } from '../admin/live-ops/live-ops.module';
import { MatchControlsAdmin } from '../admin/live-ops/match-controls.admin';
import { MatchControlsModule } from '../admin/live-ops/match-controls.module';
import { QueueControlsAdmin, type QueueControlView } from '../admin/live-ops/queue-controls.admin';
import type { LiveOpsOperation } from './live-ops-args.parser';
import type { DlqConfig } from './dlq.config';

/** The narrow settings the ticket and match stores read, as the long-running apps provide them. */
@Global()
@Module({})
class CliSettingsModule {
  static of(config: DlqConfig): DynamicModule {
    return {
      module: CliSettingsModule,
      providers: [
        { provide: TicketHeartbeatTimeout, useValue: TicketHeartbeatTimeout.of(config) },
        { provide: QueueWaitEstimateWindow, useValue: QueueWaitEstimateWindow.of(config) },
        // A released ticket leaves its shard's candidate set too (the apps' MATCHER_SHARDS).
        { provide: MATCHER_SHARD_PLAN, useValue: matcherShardPlan(config) },
      ],
      exports: [TicketHeartbeatTimeout, QueueWaitEstimateWindow, MATCHER_SHARD_PLAN],
    };
  }
}

/** The CLI's root: the live-ops services on its own DataSource and a Redis connection for wake-ups. */
export function liveOpsCliModule(config: DlqConfig, dataSource: DataSource): DynamicModule {
  return {
    module: class LiveOpsCli {},
    imports: [
      CliSettingsModule.of(config),
      PersistenceModule.forDataSource(dataSource),
      RedisModule.forWakeUps(config, 'matchplane-live-ops'),
      LiveOpsModule.forRoot(config),
      MatchControlsModule,
    ],
  };
}

/** Runs one operation; answers the lines to print (JSON lines with `json`). */
export async function executeLiveOps(
  app: INestApplicationContext,
  operation: LiveOpsOperation,
  actor: string,
  json: boolean,
): Promise<string[]> {
  const show = (value: object, text: string) => (json ? JSON.stringify(value) : text);
  switch (operation.kind) {
    case 'list': {
      const held = await app.get(QueueControlsAdmin).list();
      if (held.length === 0 && !json) return ['every mode and region is open'];
      return held.map((view) => show(view, describe(view)));
    }
    case 'cancel-match': {
      const done = await app
        .get(MatchControlsAdmin)
        .cancelMatch(operation.matchId, actor, operation.reason);
      return [
        show(
          done,
          `match ${done.matchId} CANCELLED: ${done.requeued.length} searching again, ${done.released.length} let go`,
        ),
      ];
    }
    case 'release-tickets': {
      const done = await app
        .get(MatchControlsAdmin)
        .releaseTickets(operation.playerId, actor, operation.reason);
      return [
        show(done, `released ${done.tickets.map((t) => `${t.ticketId} (${t.from})`).join(', ')}`),
      ];
    }
    case 'pause':
    case 'drain':
    case 'resume': {
      const { kind, scope, name, reason, retryAfterSeconds } = operation;
      const view = await app.get(QueueControlsAdmin).apply(kind, { scope, name }, actor, {
        reason,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
      return [show(view, describe(view))];
    }
  }
}

function describe(view: QueueControlView): string {
  const held =
    view.state === 'OPEN'
      ? ''
      : ` since ${view.setAt} by ${view.setBy}: ${view.reason}` +
        (view.retryAfterSeconds === undefined ? '' : ` (expected ${view.retryAfterSeconds} s)`);
  return `${view.scope} ${view.name} ${view.state}${held}`;
}
