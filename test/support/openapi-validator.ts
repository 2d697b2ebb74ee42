import Ajv, { type ValidateFunction } from 'ajv';
import type { RecordedExchange } from './recording-proxy';

type Schema = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Checks real answers against the served OpenAPI document: the path and method are declared, the
 * status is documented for it, and the body validates against that status's schema under the
 * answered media type. Returns what failed (empty when the answer keeps the contract).
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp }[];
  /** `METHOD template status` of every answer checked, for coverage assertions. */
  readonly covered = new Set<string>();

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addFormat('uuid', UUID).addFormat('date-time', DATE_TIME);
    this.ajv.addSchema({ $id: 'openapi', components: document.components });
    this.templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** The declared path template a concrete path matches (literal segments win over parameters). */
  templateOf(path: string): string | undefined {
    const matches = this.templates.filter(({ pattern }) => pattern.test(path));
    matches.sort((a, b) => countParams(a.template) - countParams(b.template));
    return matches[0]?.template;
  }

  check(exchange: RecordedExchange): string[] {
    const what = `${exchange.method} ${exchange.path} -> ${exchange.status}`;
    const template = this.templateOf(exchange.path);
    if (!template) return [`${what}: the path is not declared`];
    const operation = this.document.paths[template]?.[exchange.method.toLowerCase()];
    if (!operation) return [`${what}: the method is not declared for ${template}`];
    const response = operation.responses[String(exchange.status)];
    if (!response)
      return [
        `${what}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`,
      ];
    this.covered.add(`${exchange.method} ${template} ${exchange.status}`);
    if (exchange.body === undefined) {
      return response.content ? [`${what}: empty body where a schema is documented`] : [];
    }
    const mediaType = exchange.contentType.split(';')[0]?.trim() ?? '';
    const media = response.content?.[mediaType];
    if (!media) {
      return [
        `${what}: ${mediaType} not documented (documented: ${Object.keys(response.content ?? {}).join(', ') || 'no body'})`,
      ];
    }
    const validate = this.validatorOf(media.schema);
    if (validate(exchange.body)) return [];
    return [`${what}: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(exchange.body)}`];
  }

  private validatorOf(schema: Schema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      const resolved = JSON.parse(
        key.replace(/"#\/components\//g, '"openapi#/components/'),
      ) as Schema;
      validate = this.ajv.compile(resolved);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

function countParams(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}
