import { Module, type DynamicModule } from '@nestjs/common';
import type { ServiceConfig } from '@matchplane/config';
import { AuditModule } from '@matchplane/persistence';
import { QueueControlsModule } from '@matchplane/tickets';
import { LiveOpsScopes, QueueControlsAdmin } from './queue-controls.admin';

/** The operator's controls of live play (queue holds), for the admin routes, console and CLI. */
@Module({})
export class LiveOpsModule {
  static forRoot(config: Pick<ServiceConfig, 'QUEUE_MODES' | 'PROBE_REGIONS'>): DynamicModule {
    return {
      module: LiveOpsModule,
      imports: [QueueControlsModule, AuditModule],
      providers: [
        QueueControlsAdmin,
        { provide: LiveOpsScopes, useValue: LiveOpsScopes.of(config) },
      ],
      exports: [QueueControlsAdmin, LiveOpsScopes],
    };
  }
}
