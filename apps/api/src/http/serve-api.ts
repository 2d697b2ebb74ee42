import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { bootLogger, useAppLogger } from '@matchplane/observability';
import type { ApiConfig } from '../api.config';
import { configureApi, createApiAdapter } from './configure-api';
import { serveOpenApi } from './openapi';

/**
 * Boots an API root module (the stock one, or a studio's with its own modules plugged in) over
 * Fastify and listens on API_HOST:API_PORT; closes cleanly on SIGTERM/SIGINT. The module is built
 * here, so one refusing its configuration (an unreadable key file) rejects like any boot failure.
 */
export async function serveApi(
  rootModule: () => DynamicModule,
  config: ApiConfig,
  label = 'api',
): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    rootModule(),
    createApiAdapter(config),
    // configureApi installs the body parsers (JSON only, with our error codes).
    { logger: bootLogger('api', config), bodyParser: false },
  );
  const logger = useAppLogger(app);
  configureApi(app);
  serveOpenApi(app);
  app.enableShutdownHooks();
  await app.listen(config.API_PORT, config.API_HOST);
  logger.log(`${label} listening on http://${config.API_HOST}:${config.API_PORT}`);
}
