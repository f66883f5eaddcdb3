import { ArrayMaxSize, ArrayMinSize, IsArray, IsString } from 'class-validator';
import { MAX_SERIALS_PER_CHECK } from './revocation.dto';

/** license.statuses.v1: the stored status of serials, from PostgreSQL, for cache misses. Not org-scoped: the caller filters. */
export class SerialStatusesRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SERIALS_PER_CHECK)
  @IsString({ each: true })
  serials!: string[];
}
