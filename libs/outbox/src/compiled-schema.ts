import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  ValidationTypes,
  type MetadataStorage,
  type ValidationArguments,
} from 'class-validator';
import { isPlainObject } from './event-schema.parts';

export type Schema = new () => object;

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/** One validator of a property, resolved from class-validator's metadata once. */
interface CompiledCheck {
  readonly validate: (value: unknown, args: ValidationArguments) => unknown;
  readonly constraints: unknown[];
  readonly each: boolean;
  readonly validateIf?: (object: unknown, value: unknown) => boolean;
}

interface CompiledProperty {
  readonly name: string;
  /** ValidateIf: all must hold for the property to be validated at all. */
  readonly conditions: ((object: unknown, value: unknown) => boolean)[];
  readonly checks: CompiledCheck[];
  /** ValidateNested over an array: the class class-transformer makes of each element. */
  readonly nested?: CompiledSchema;
}

/**
 * A payload schema compiled once from its class-validator metadata (the decorators of the event schemas stay
 * the only statement of the rules). `accepts` runs the same validators in the order and under the
 * conditions class-validator's executor does, on the plain payload, so a valid payload costs no
 * plainToInstance and no metadata lookup. It is one-sided: it answers true only when
 * class-validator would accept, and anything it does not model exactly (a nested value that is
 * not an array of plain objects, a Set, a validator answering other than `true`) is a false, after
 * which class-validator itself decides and words the problems. Compiling refuses any metadata it
 * cannot model (promises, groups), so a new decorator cannot be skipped silently.
 */
export class CompiledSchema {
  private readonly allowed: ReadonlySet<string>;
  private readonly properties: readonly CompiledProperty[];

  constructor(private readonly schema: Schema) {
    const storage = getMetadataStorage();
    const metadatas = storage.getTargetValidationMetadatas(schema, '', false, false, undefined);
    if (metadatas.length === 0) throw new Error(`${schema.name} has no validation metadata`);
    const byProperty = storage.groupByPropertyName(metadatas);
    this.allowed = new Set(Object.keys(byProperty));
    this.properties = Object.entries(byProperty).map(([name, list]) =>
      CompiledSchema.property(schema, name, list),
    );
  }

  private static property(
    schema: Schema,
    name: string,
    list: ValidationMetadata[],
  ): CompiledProperty {
    const conditions: CompiledProperty['conditions'] = [];
    const checks: CompiledCheck[] = [];
    let nested: CompiledSchema | undefined;
    for (const metadata of list) {
      if (metadata.groups?.length || metadata.always === false) {
        throw new Error(`${schema.name}.${name}: validation groups are not compiled`);
      }
      switch (metadata.type) {
        case ValidationTypes.CONDITIONAL_VALIDATION:
          conditions.push(metadata.constraints[0] as CompiledProperty['conditions'][number]);
          break;
        case ValidationTypes.IS_DEFINED:
        case ValidationTypes.CUSTOM_VALIDATION:
          for (const constraint of getMetadataStorage().getTargetValidatorConstraints(
            metadata.constraintCls,
          )) {
            if (constraint.async)
              throw new Error(`${schema.name}.${name}: async validators are not compiled`);
            const instance = constraint.instance as { validate: CompiledCheck['validate'] };
            checks.push({
              validate: (value, args) => instance.validate(value, args),
              constraints: metadata.constraints,
              each: metadata.each,
              ...(metadata.validateIf ? { validateIf: metadata.validateIf } : {}),
            });
          }
          break;
        case ValidationTypes.NESTED_VALIDATION:
          nested = CompiledSchema.elementSchema(schema, name);
          break;
        case ValidationTypes.WHITELIST:
          break;
        default:
          throw new Error(`${schema.name}.${name}: ${metadata.type} is not compiled`);
      }
    }
    return { name, conditions, checks, ...(nested ? { nested } : {}) };
  }

  /** What class-transformer makes of an element of the property's array, asked of it once. */
  private static elementSchema(schema: Schema, name: string): CompiledSchema {
    const probe = plainToInstance(schema, { [name]: [{}] }) as Record<string, unknown[]>;
    const element = probe[name]?.[0] as object | undefined;
    const elementClass = element?.constructor as Schema | undefined;
    if (!elementClass || elementClass === Object) {
      throw new Error(`${schema.name}.${name}: nested validation without a @Type class`);
    }
    return new CompiledSchema(elementClass);
  }

  accepts(object: Record<string, unknown>): boolean {
    if (Object.getPrototypeOf(object) !== Object.prototype) return false;
    for (const key of Object.keys(object)) if (!this.allowed.has(key)) return false;
    for (const property of this.properties) {
      const value = object[property.name];
      if (!property.conditions.every((condition) => condition(object, value))) continue;
      for (const check of property.checks) {
        if (check.validateIf && !check.validateIf(object, value)) continue;
        const args: ValidationArguments = {
          targetName: this.schema.name,
          property: property.name,
          object,
          value,
          constraints: check.constraints,
        };
        if (value instanceof Set || value instanceof Map) return false;
        const valid =
          check.each && Array.isArray(value)
            ? value.every((element) => check.validate(element, args) === true)
            : check.validate(value, args) === true;
        if (!valid) return false;
      }
      if (property.nested && value !== undefined) {
        if (!Array.isArray(value)) return false;
        for (const element of value as unknown[]) {
          if (!isPlainObject(element) || !property.nested.accepts(element)) return false;
        }
      }
    }
    return true;
  }
}
