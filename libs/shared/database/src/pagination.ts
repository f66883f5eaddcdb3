/** Offset pagination as the API defines it: 1-based page, newest first, ties broken by id descending. */
export interface PageRequest {
  page: number;
  per_page: number;
}

export function pageWindow({ page, per_page }: PageRequest): { skip: number; take: number } {
  return { skip: (page - 1) * per_page, take: per_page };
}
