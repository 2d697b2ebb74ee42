import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { validationFailed } from '../../http/configure-api';

/** Form and query fields as the browser sends them: an empty input means "not given". */
export function presentFields(
  raw: unknown,
  names: readonly string[],
): Record<string, string | undefined> {
  const fields: Record<string, string | undefined> = {};
  const source = (raw ?? {}) as Record<string, unknown>;
  for (const name of names) {
    const value = source[name];
    const text = typeof value === 'string' ? value.trim() : undefined;
    fields[name] = text === '' ? undefined : text;
  }
  return fields;
}

/**
 * The admin API's own DTO checks on a console form, so both doors accept exactly the same input;
 * a refusal is a 400 whose message names each field.
 */
export async function validatedForm<T extends object>(
  dto: new () => T,
  fields: Record<string, unknown>,
): Promise<T> {
  const defined = Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  );
  const instance = plainToInstance(dto, defined);
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw validationFailed(errors);
  return instance;
}

/** The outcome line a redirect carried (seeOther), cut to what a page shows. */
export function noticeOf(query: unknown): string | undefined {
  return presentFields(query, ['notice']).notice?.slice(0, 300);
}
