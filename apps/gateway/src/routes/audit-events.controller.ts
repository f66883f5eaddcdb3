import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import { AuditEventListView, ListAuditEventsQueryDto } from '@licensing/contracts';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes } from '../http/routes';
import { AuditEventsService } from '../audit/audit-events.service';

/** Admin keys only (no AllowScopes): the log names every key of the organization and its changes. */
@ApiTags('audit-events')
@Controller(routes('audit-events'))
export class AuditEventsController {
  constructor(private readonly audit: AuditEventsService) {}

  @Get()
  @Operation({
    id: 'listAuditEvents',
    summary: 'List audit events',
    description:
      'Every change made with an API key of the organization, newest first, a page at a time: which ' +
      "key, from which address, under which `x-request-id`, and each changed field's old and new " +
      'value (never a secret). Filters: `resource_type`, `resource_id`, `action`, `api_key_id`, and ' +
      '`from` (inclusive) / `to` (exclusive) on `occurred_at`.',
  })
  @ApiOkResponse({
    type: AuditEventListView,
    description: 'Newest first. Changes made by the services appear within about a second of their response.',
  })
  @ApiProblems()
  list(@Req() request: FastifyRequest, @Query() query: ListAuditEventsQueryDto): Promise<AuditEventListView> {
    return this.audit.list(request.auth!.orgId, query);
  }
}
