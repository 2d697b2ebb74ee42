import { Injectable, type PipeTransform } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { isUUID, IsUUID, type ValidationOptions } from 'class-validator';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/*
 * Ids are case-insensitive wherever the API accepts them: a UUID in capitals names the same row
 * (PostgreSQL's uuid type agrees), and everything past the edge compares canonical lowercase
 * strings (join claims, roster entries, Map keys). So every accepted id is lowercased as it is
 * validated, once, here.
 */

function lowercase(value: unknown): unknown {
  if (typeof value === 'string') return value.toLowerCase();
  if (Array.isArray(value)) return value.map(lowercase);
  return value;
}

/** A UUID field (or, with `each`, an array of them) in any case, handed on in lowercase. */
export function IsUuidInput(options?: ValidationOptions): PropertyDecorator {
  return (target, property) => {
    Transform(({ value }: { value: unknown }) => lowercase(value))(target, property);
    IsUUID('all', options)(target, property);
  };
}

/** A UUID path parameter in any case, handed on in lowercase; otherwise a 400 naming it. */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  constructor(private readonly what: string) {}

  transform(value: string): string {
    if (isUUID(value, 'all')) return value.toLowerCase();
    throw new CodedError(ErrorCode.VALIDATION_FAILED, `The ${this.what} must be a UUID`);
  }
}
