import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * Small builders for the OpenAPI 3.0 schemas of the contract types, so each schema reads like its
 * TypeScript interface (libs/contracts). Objects are closed (`additionalProperties: false`): a field
 * the API starts answering without documenting it fails the contract e2e.
 */
export const str = (description?: string): SchemaObject => ({
  type: 'string',
  ...(description ? { description } : {}),
});
export const dateTime = (description?: string): SchemaObject => ({
  ...str(description),
  format: 'date-time',
});
export const uuid = (description?: string): SchemaObject => ({
  ...str(description),
  format: 'uuid',
});
export const int = (description?: string): SchemaObject => ({
  type: 'integer',
  ...(description ? { description } : {}),
});
export const num = (description?: string): SchemaObject => ({
  type: 'number',
  ...(description ? { description } : {}),
});
export const bool = (description?: string): SchemaObject => ({
  type: 'boolean',
  ...(description ? { description } : {}),
});
export const oneOfStrings = (values: readonly string[], description?: string): SchemaObject => ({
  ...str(description),
  enum: [...values],
});
export const arrayOf = (items: SchemaObject | { $ref: string }, description?: string) => ({
  type: 'array' as const,
  items,
  ...(description ? { description } : {}),
});
export const mapOf = (values: SchemaObject | { $ref: string }, description?: string) => ({
  type: 'object' as const,
  additionalProperties: values,
  ...(description ? { description } : {}),
});
export const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });
export const ref = (name: string): { $ref: string } => ({ $ref: `#/components/schemas/${name}` });

type Property = SchemaObject | { $ref: string };

/** A closed object: `required` are always present, `optional` may be left out. */
export function object(
  required: Record<string, Property>,
  optional: Record<string, Property> = {},
  description?: string,
): SchemaObject {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(required),
    properties: { ...required, ...optional },
    additionalProperties: false,
  };
}

/** An object this document does not detail field by field (operator routes): named, left open. */
export function openObject(description: string): SchemaObject {
  return { type: 'object', description, additionalProperties: true };
}

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type OptionalKeys<T> = Exclude<keyof T, RequiredKeys<T>>;

/**
 * `object` held to a contract interface at compile time: the required and optional properties
 * must be exactly the interface's (a field added to, or removed from, libs/contracts fails tsc
 * until its schema follows).
 */
export function schemaOf<T>() {
  return (
    required: Record<RequiredKeys<T>, Property>,
    ...optional: [OptionalKeys<T>] extends [never] ? [] : [Record<OptionalKeys<T>, Property>]
  ): SchemaObject => object(required, optional[0] ?? {});
}
