import { PipeTransform } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DomainError } from '@licensing/shared/errors';

/** Every resource is served under both prefixes (docs/api.md): the same handler, the same data. */
export function routes(resource: string): string[] {
  return [`api/v1/${resource}`, `v1/${resource}`];
}

/** A path id that is not a UUID is a 400, not a 404: the request is malformed. */
export const uuidParam: PipeTransform<string, string> = {
  transform(value: string): string {
    if (!isUUID(value, 'all')) throw DomainError.validation([{ field: 'id', message: 'id must be a UUID' }]);
    return value;
  },
};
