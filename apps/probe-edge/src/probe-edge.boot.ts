import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootLogger } from '@matchplane/observability';
import type { ProbeEdgeConfig } from './probe-edge.config';
import type { TimedRequest } from './probe-edge.routes';
import { ProbeEdgeModule } from './probe-edge.module';

/** Small bodies only: a challenge echoed back is a few hundred bytes. */
const BODY_LIMIT_BYTES = 4_096;

export async function bootProbeEdge(config: ProbeEdgeConfig): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    ProbeEdgeModule.forRoot(config),
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES }),
    { logger: bootLogger('probe-edge', config) },
  );
  // The receive time is stamped first thing, before the body is read or validated.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request: TimedRequest, _reply, done) => {
      request.receivedAtUs = Number(process.hrtime.bigint() / 1000n);
      done();
    });
  app.enableShutdownHooks();
  await app.listen(config.PROBE_EDGE_PORT, config.PROBE_EDGE_HOST);
  new Logger('probe-edge').log(
    `probe-edge ${config.PROBE_EDGE_REGION} listening on http://${config.PROBE_EDGE_HOST}:${config.PROBE_EDGE_PORT}`,
  );
  return app;
}
