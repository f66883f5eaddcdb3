import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { IntegerQuery, Optional } from './validation';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;

export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, default: 1, description: '1-based page number' })
  @IntegerQuery()
  @Optional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE })
  @IntegerQuery()
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_PER_PAGE)
  per_page?: number;
}

export function pageOf(query: PageQueryDto): { page: number; per_page: number } {
  return { page: query.page ?? 1, per_page: query.per_page ?? DEFAULT_PER_PAGE };
}
