import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { REPO_ROOT } from './processes';

interface AsyncApiMessages {
  components: { messages: Record<string, { payload: Record<string, unknown> }> };
}

/**
 * Validates socket frames against the payload schema docs/asyncapi.yaml gives their `type`.
 * Returns what failed (empty when every frame keeps the documented protocol).
 */
export function asyncApiFrameChecker(): (frame: unknown) => string[] {
  const document = parse(
    readFileSync(path.join(REPO_ROOT, 'docs/asyncapi.yaml'), 'utf8'),
  ) as AsyncApiMessages;
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  const validators = new Map<string, ValidateFunction>();
  return (frame) => {
    const type = (frame as { type?: unknown })?.type;
    const message = typeof type === 'string' ? document.components.messages[type] : undefined;
    if (!message) return [`undocumented message ${JSON.stringify(frame)}`];
    let validate = validators.get(type as string);
    if (!validate) {
      validate = ajv.compile(message.payload);
      validators.set(type as string, validate);
    }
    return validate(frame)
      ? []
      : [`${ajv.errorsText(validate.errors)} in ${JSON.stringify(frame)}`];
  };
}
