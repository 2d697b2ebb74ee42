import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { TicketsModule } from '@matchplane/tickets';
import { QueuePolicyModule } from '../queue/queue-policy.module';
import { LatenciesModule } from './latencies.module';
import { PgProbeRecorder } from './pg-probe.recorder';
import { ProbeRecorder } from './probe.recorder';
import { ProbesController } from './probes.controller';

export interface ProbesModuleOptions {
  /** The recorder bound to ProbeRecorder; null leaves it unbound and the probe routes answer 503. */
  readonly recorder: Type<ProbeRecorder> | null;
}

/** Owns `probe_challenges`; the probe routes. */
@Module({})
export class ProbesModule {
  static forRoot(options: ProbesModuleOptions = { recorder: PgProbeRecorder }): DynamicModule {
    return {
      module: ProbesModule,
      imports: [TicketsModule, QueuePolicyModule, LatenciesModule],
      controllers: [ProbesController],
      providers: [
        ...(options.recorder ? [{ provide: ProbeRecorder, useClass: options.recorder }] : []),
      ],
    };
  }
}
