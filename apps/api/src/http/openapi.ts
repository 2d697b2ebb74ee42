import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

/** Where the generated contract is served (under both prefixes, like every contract route). */
export const OPENAPI_PATHS = ['/v1/openapi.json', '/api/v1/openapi.json'] as const;

/** Generates the OpenAPI document from the controllers and serves it as JSON. */
export function serveOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Matchplane')
      .setDescription('Matchmaking and match-lifecycle control plane')
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  const http = app.getHttpAdapter();
  for (const path of OPENAPI_PATHS) {
    http.get(path, (_request, reply: { send(body: unknown): void }) => reply.send(document));
  }
  return document;
}
