import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { parseQueueModes, parseRegions, type ServiceConfig } from '@matchplane/config';
import { ErrorCode } from '@matchplane/contracts';
import type { QueueControl, QueueControlScope, QueueControlState } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { AuditWriter, runInTransaction } from '@matchplane/persistence';
import { QueueControls } from '@matchplane/tickets';

/** The modes and regions an operator may hold: the configured ones. */
export abstract class LiveOpsScopes {
  abstract readonly modes: readonly string[];
  abstract readonly regions: readonly string[];

  static of(config: Pick<ServiceConfig, 'QUEUE_MODES' | 'PROBE_REGIONS'>): LiveOpsScopes {
    return {
      modes: parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode),
      regions: parseRegions(config.PROBE_REGIONS),
    };
  }
}

export type QueueControlAction = 'pause' | 'drain' | 'resume';

const STATE_OF: Record<Exclude<QueueControlAction, 'resume'>, QueueControlState> = {
  pause: 'PAUSED',
  drain: 'DRAINING',
};

/** A mode or region as the operator routes answer it: held (with the hold) or OPEN. */
export interface QueueControlView {
  scope: QueueControlScope;
  name: string;
  state: QueueControlState | 'OPEN';
  reason?: string;
  retryAfterSeconds?: number;
  setBy?: string;
  setAt?: string;
}

function viewOf(control: QueueControl): QueueControlView {
  return {
    scope: control.scope,
    name: control.name,
    state: control.state,
    reason: control.reason,
    ...(control.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: control.retryAfterSeconds }),
    setBy: control.setBy,
    setAt: control.setAt.toISOString(),
  };
}

/**
 * Operators pause, drain and resume modes and regions (REST, CLI and console alike): each change
 * one transaction with its audit row. Setting a hold again replaces it (a pause may become a
 * drain); resuming what is open changes nothing and writes no audit row.
 */
@Injectable()
export class QueueControlsAdmin {
  constructor(
    private readonly dataSource: DataSource,
    private readonly controls: QueueControls,
    private readonly audit: AuditWriter,
    private readonly scopes: LiveOpsScopes,
  ) {}

  async list(): Promise<QueueControlView[]> {
    return (await this.controls.list(this.dataSource.manager)).map(viewOf);
  }

  async apply(
    action: QueueControlAction,
    target: { scope: QueueControlScope; name: string },
    operator: string,
    details: { reason: string; retryAfterSeconds?: number },
  ): Promise<QueueControlView> {
    this.known(target.scope, target.name);
    return runInTransaction(this.dataSource, async (manager) => {
      if (action === 'resume') {
        const lifted = await this.controls.clear(manager, target.scope, target.name);
        if (lifted) {
          await this.audit.record(manager, {
            actor: operator,
            action: 'queue.control.resumed',
            targetType: target.scope,
            targetId: target.name,
            reason: details.reason,
            details: { was: lifted.state },
          });
        }
        return { scope: target.scope, name: target.name, state: 'OPEN' };
      }
      const control = await this.controls.set(manager, {
        ...target,
        state: STATE_OF[action],
        reason: details.reason,
        ...(details.retryAfterSeconds === undefined
          ? {}
          : { retryAfterSeconds: details.retryAfterSeconds }),
        setBy: operator,
      });
      await this.audit.record(manager, {
        actor: operator,
        action: action === 'pause' ? 'queue.control.paused' : 'queue.control.draining',
        targetType: target.scope,
        targetId: target.name,
        reason: details.reason,
        details: { retryAfterSeconds: details.retryAfterSeconds ?? null },
      });
      return viewOf(control);
    });
  }

  private known(scope: QueueControlScope, name: string): void {
    const names = scope === 'mode' ? this.scopes.modes : this.scopes.regions;
    if (names.includes(name)) return;
    throw new CodedError(
      scope === 'mode' ? ErrorCode.UNKNOWN_MODE : ErrorCode.UNKNOWN_REGION,
      `Unknown ${scope} "${name.slice(0, 64)}"; ${scope}s: ${names.join(', ')}`,
    );
  }
}
