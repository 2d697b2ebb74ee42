import 'reflect-metadata';

export interface EnvVarDoc {
  description: string;
  /** A secret is never printed: not in validation errors, not in logs. */
  secret?: boolean;
}

const ENV_DOCS = Symbol('matchplane:env-docs');

/** Documents one environment variable of a config class (used for errors and the README table). */
export function EnvVar(doc: EnvVarDoc): PropertyDecorator {
  return (target, propertyKey) => {
    const docs: Map<string, EnvVarDoc> = Reflect.getMetadata(ENV_DOCS, target) ?? new Map();
    const own = new Map(docs);
    own.set(String(propertyKey), doc);
    Reflect.defineMetadata(ENV_DOCS, own, target);
  };
}

export function envVarDocs(configClass: abstract new () => object): Map<string, EnvVarDoc> {
  return (Reflect.getMetadata(ENV_DOCS, configClass.prototype) as Map<string, EnvVarDoc>) ?? new Map();
}
