import { Module, type DynamicModule } from '@nestjs/common';
import { EdgeHttpServer } from './edge-http.server';
import type { ProbeEdgeConfig } from './probe-edge.config';
import { ProbeEdge } from './probe-edge.service';
import { loadProbeSigningKeys } from './probe-keys.loader';
import { UdpProbeListener } from './udp-probe.listener';

/**
 * The edge's process: Nest wires it and runs its lifecycle (boot, shutdown hooks); no request goes
 * through Nest. HTTP is a plain node:http server ({@link EdgeHttpServer}), UDP a dgram socket.
 */
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
      providers: [
        { provide: ProbeEdge, useValue: edge },
        {
          provide: EdgeHttpServer,
          useFactory: () =>
            new EdgeHttpServer(edge, {
              host: config.PROBE_EDGE_HOST,
              port: config.PROBE_EDGE_PORT,
            }),
        },
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
