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
    const docs =
      (Reflect.getMetadata(ENV_DOCS, target) as Map<string, EnvVarDoc> | undefined) ??
      new Map<string, EnvVarDoc>();
    const own = new Map(docs);
    own.set(String(propertyKey), doc);
    Reflect.defineMetadata(ENV_DOCS, own, target);
  };
}

export function envVarDocs(configClass: abstract new () => object): Map<string, EnvVarDoc> {
  const prototype = configClass.prototype as object;
  return (
    (Reflect.getMetadata(ENV_DOCS, prototype) as Map<string, EnvVarDoc> | undefined) ??
    new Map<string, EnvVarDoc>()
  );
}
