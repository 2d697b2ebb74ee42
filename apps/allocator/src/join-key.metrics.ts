import { Inject, Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { RosterStore } from '@matchplane/allocation';
import { JoinTokenSigner } from '@matchplane/join-auth';
import { MetricsRegistry } from '@matchplane/observability';
import { joinKeyStatuses, type JoinKeyStatus } from './join-key-retirement';

/**
 * What each join key id still signs, read from PostgreSQL when Prometheus scrapes (one grouped
 * statement), so an operator sees when a rotated-out key can leave the key set.
 */
@Injectable()
export class JoinKeyMetrics {
  private readonly logger = new Logger('JoinKeyMetrics');

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    dataSource: DataSource,
    rosters: RosterStore,
    signer: JoinTokenSigner,
  ) {
    const registers = [registry];
    const read = async () =>
      joinKeyStatuses(
        await rosters.joinKeyUsage(dataSource.manager, new Date()),
        signer.heldKeyIds(),
        signer.activeKeyId,
      );
    let pending: ReturnType<typeof read> | undefined;
    // One read per scrape serves all three gauges (each gauge's collect asks for it).
    const statuses = () => {
      pending ??= read().finally(() => setImmediate(() => (pending = undefined)));
      return pending.catch((error: unknown) => {
        this.logger.warn(`join key usage unreadable: ${(error as Error).message}`);
        return [];
      });
    };
    const gauges: [name: string, help: string, value: (status: JoinKeyStatus) => number][] = [
      [
        'join_key_unexpired_tokens',
        'Join tokens not yet expired, by the key id that signed them',
        (status) => status.unexpiredTokens,
      ],
      [
        'join_key_live_rosters',
        'Rosters of live allocations (REQUESTED or ALLOCATED), by the key id that signed them',
        (status) => status.liveRosters,
      ],
      [
        'join_key_retirable',
        '1 when a held, inactive key id signs nothing live (it can leave the key set); 0 otherwise',
        (status) => (status.retirable ? 1 : 0),
      ],
    ];
    for (const [name, help, value] of gauges) {
      new Gauge({
        name,
        help,
        labelNames: ['key_id'],
        registers,
        async collect() {
          this.reset();
          for (const status of await statuses()) this.set({ key_id: status.keyId }, value(status));
        },
      });
    }
  }
}
