import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EdgeProblemFilter } from './edge-problem.filter';
import type { ProbeEdgeConfig } from './probe-edge.config';
import { EdgeHealthController } from './probe-edge.controller';
import { ProbeEdgeRoutes } from './probe-edge.routes';
import { ProbeEdge } from './probe-edge.service';
import { loadProbeSigningKeys } from './probe-keys.loader';
import { UdpProbeListener } from './udp-probe.listener';

@Module({})
export class ProbeEdgeModule {
  /** Loads the key set first: without key material the edge refuses to start (one clear line). */
  static forRoot(config: ProbeEdgeConfig): DynamicModule {
    const edge = new ProbeEdge(
      config.PROBE_EDGE_REGION,
      loadProbeSigningKeys(config),
      config.PROBE_CHALLENGE_TTL_MS,
    );
    return {
      module: ProbeEdgeModule,
      controllers: [EdgeHealthController],
      providers: [
        { provide: ProbeEdge, useValue: edge },
        EdgeProblemFilter,
        { provide: APP_FILTER, useExisting: EdgeProblemFilter },
        ProbeEdgeRoutes,
        ...(config.PROBE_EDGE_UDP_PORT === undefined
          ? []
          : [
              {
                provide: UdpProbeListener,
                useFactory: () =>
                  new UdpProbeListener(edge, {
                    host: config.PROBE_EDGE_HOST,
                    port: config.PROBE_EDGE_UDP_PORT!,
                  }),
              },
            ]),
      ],
    };
  }
}
