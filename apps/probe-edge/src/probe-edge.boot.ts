import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { bootLogger } from '@matchplane/observability';
import type { ProbeEdgeConfig } from './probe-edge.config';
import { ProbeEdgeModule } from './probe-edge.module';

/**
 * Boots the edge as a Nest application context (no Nest HTTP adapter): its HTTP and UDP listeners
 * open on bootstrap and close on SIGTERM.
 */
export async function bootProbeEdge(config: ProbeEdgeConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(ProbeEdgeModule.forRoot(config), {
    logger: bootLogger('probe-edge', config),
  });
  app.enableShutdownHooks();
  return app;
}
