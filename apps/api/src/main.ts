import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfigOrExit } from '@matchplane/config';
import { ApiConfig } from './api.config';
import { bootLogger, exitOnBootFailure, useAppLogger } from '@matchplane/observability';
import { ApiModule } from './api.module';
import { configureApi, createApiAdapter } from './http/configure-api';
import { serveOpenApi } from './http/openapi';

async function bootstrap(config: ApiConfig): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.forRoot(config),
    createApiAdapter(config),
    // configureApi installs the body parsers (JSON only, with our error codes).
    { logger: bootLogger('api', config), bodyParser: false },
  );
  const logger = useAppLogger(app);
  configureApi(app);
  serveOpenApi(app);
  app.enableShutdownHooks();
  await app.listen(config.API_PORT, config.API_HOST);
  logger.log(`api listening on http://${config.API_HOST}:${config.API_PORT}`);
}

const config = loadConfigOrExit(ApiConfig, 'api');
bootstrap(config).catch(exitOnBootFailure('api'));
