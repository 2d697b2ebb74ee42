import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { TicketsModule } from '@matchplane/tickets';
import { QueuePolicyModule } from '../queue/queue-policy.module';
import { LatenciesModule } from '@matchplane/latency';
import { PgProbeRecorder } from './pg-probe.recorder';
import { ProbeMeasurementKeys } from './probe-measurement.keys';
import { ProbeMeasurementRecorder } from './probe-measurement.recorder';
import { ProbeMeasurementsController } from './probe-measurements.controller';
import { ProbeRecorder } from './probe.recorder';
import { ProbesController } from './probes.controller';

export interface ProbesModuleOptions {
  /** The recorder bound to ProbeRecorder; null leaves it unbound and the probe routes answer 503. */
  readonly recorder: Type<ProbeRecorder> | null;
  /** The probe key set edge measurements are verified with (none: that route answers 503). */
  readonly measurementKeys?: ProbeMeasurementKeys;
}

/** The probe routes, over libs/latency's stores. */
@Module({})
export class ProbesModule {
  static forRoot(options: ProbesModuleOptions = { recorder: PgProbeRecorder }): DynamicModule {
    return {
      module: ProbesModule,
      imports: [TicketsModule, QueuePolicyModule, LatenciesModule],
      controllers: [ProbesController, ProbeMeasurementsController],
      providers: [
        {
          provide: ProbeMeasurementKeys,
          useValue: options.measurementKeys ?? new ProbeMeasurementKeys(null),
        },
        ProbeMeasurementRecorder,
        ...(options.recorder ? [{ provide: ProbeRecorder, useClass: options.recorder }] : []),
      ],
    };
  }
}
