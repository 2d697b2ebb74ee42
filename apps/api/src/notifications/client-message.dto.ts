import { plainToInstance } from 'class-transformer';
import { Equals, IsObject, ValidateBy, buildMessage, validateSync } from 'class-validator';
import type { ClientNotificationMessage } from '@matchplane/contracts';
import { describeJsonProblem, inspectJson } from '../http/json-limits';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `{matchId: revision}`: UUID keys, revisions integers >= 0 (0: the whole history). */
function IsRevisionMap(): PropertyDecorator {
  return ValidateBy({
    name: 'isRevisionMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        Object.entries(value).every(
          ([key, revision]) =>
            UUID.test(key) &&
            typeof revision === 'number' &&
            Number.isSafeInteger(revision) &&
            revision >= 0,
        ),
      defaultMessage: buildMessage(
        (prefix) => `${prefix}$property must map match ids (UUIDs) to revisions (integers >= 0)`,
      ),
    },
  });
}

export class ResumeMessageDto {
  @Equals('resume')
  type!: 'resume';

  @IsObject()
  @IsRevisionMap()
  matches!: Record<string, number>;
}

export type ParsedClientMessage =
  { ok: true; message: ClientNotificationMessage } | { ok: false; problem: string };

/**
 * One client frame, validated like every other input (unknown fields refused), within the same
 * JSON limits as request bodies: a frame nested thousands deep overflows class-transformer.
 */
export function parseClientMessage(data: Buffer | string, maxDepth: number): ParsedClientMessage {
  let plain: unknown;
  try {
    plain = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const limit = inspectJson(plain, maxDepth, 'message');
  if (limit) return { ok: false, problem: describeJsonProblem(limit) };
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, problem: 'not a JSON object' };
  }
  const dto = plainToInstance(ResumeMessageDto, plain);
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    const problems = errors.flatMap((error) => Object.values(error.constraints ?? {}));
    return { ok: false, problem: problems.join('; ') };
  }
  return { ok: true, message: { type: dto.type, matches: { ...dto.matches } } };
}
