import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  PathItemObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ROUTE_PREFIXES } from '@matchplane/contracts';
import { CONTRACT_SCHEMAS } from './openapi/contract-schemas';

/** Where the generated contract is served (under both prefixes, like every contract route). */
export const OPENAPI_PATHS = ['/v1/openapi.json', '/api/v1/openapi.json'] as const;

const [CANONICAL_PREFIX] = ROUTE_PREFIXES;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** The tag every alias operation carries, so a reader sees each route once under its resource. */
export const ALIAS_TAG = 'aliases (/api/v1)';

/** Generates the OpenAPI document from the controllers and serves it as JSON. */
export function serveOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const document = buildOpenApi(app);
  const http = app.getHttpAdapter();
  for (const path of OPENAPI_PATHS) {
    http.get(path, (_request, reply: { send(body: unknown): void }) => reply.send(document));
  }
  return document;
}

export function buildOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Matchplane')
      .setDescription(
        'Matchmaking and match-lifecycle control plane. Every route is served under /v1 (documented here) ' +
          'and under /api/v1 (the same operation, tagged "aliases (/api/v1)"). Errors are ' +
          'application/problem+json (components.schemas.Problem); `x-problem-codes` lists the codes ' +
          'a response status may carry. The notification socket and the join protocol: docs/asyncapi.yaml.',
      )
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...CONTRACT_SCHEMAS },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of operationsOf(item)) {
      markProblems(operation);
      // One controller route under two prefixes gets `Name[0]`, `Name[1]`: keep the plain name.
      operation.operationId = operation.operationId?.replace(/\[\d+\]$/, '');
    }
    const canonical = canonicalPathOf(path);
    if (canonical !== path) markAlias(item, canonical);
  }
  return document;
}

/** The /v1 path an /api/v1 alias stands for (the path itself when it is canonical). */
export function canonicalPathOf(path: string): string {
  for (const prefix of ROUTE_PREFIXES) {
    if (prefix !== CANONICAL_PREFIX && path.startsWith(`/${prefix}/`)) {
      return `/${CANONICAL_PREFIX}${path.slice(prefix.length + 1)}`;
    }
  }
  return path;
}

function operationsOf(item: PathItemObject): OperationObject[] {
  return METHODS.map((method) => item[method]).filter((op): op is OperationObject => !!op);
}

/**
 * Problems are application/problem+json, and their description (the codes, from Answers) becomes
 * the machine-readable `x-problem-codes`.
 */
function markProblems(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    const answer = response as ResponseObject & { 'x-problem-codes'?: string[] };
    if (Number(status) < 400 || !answer.content?.['application/json']) continue;
    answer.content = { 'application/problem+json': answer.content['application/json'] };
    answer['x-problem-codes'] = answer.description.split(', ');
  }
}

/**
 * The alias keeps its own operation (the same components, parameters and responses, so nothing is
 * redefined) with its own tag, an operationId suffix and `x-alias-of` naming the /v1 path.
 */
function markAlias(item: PathItemObject, canonical: string): void {
  for (const operation of operationsOf(item)) {
    operation.tags = [ALIAS_TAG];
    operation.operationId = operation.operationId ? `${operation.operationId}_alias` : undefined;
    operation.description =
      `Alias of ${canonical}: the same contract. ${operation.description ?? ''}`.trim();
    (operation as OperationObject & { 'x-alias-of': string })['x-alias-of'] = canonical;
  }
}
