import { OutgoingHttpHeaders } from 'node:http';
import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import { LicenseEventsQueryDto, MAX_SERIALS_PER_STREAM } from '@licensing/contracts';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes } from '../http/routes';
import { hashApiKey } from '../identity/api-key-issuer';
import { bearerKeyOf } from '../identity/authenticate.hook';
import { AllowScopes } from '../http/route-access';
import { rateLimitHeaders } from '../rate-limits/rate-limits';
import { HEARTBEAT_MS, LicenseEventHub, MAX_REPLAY } from '../push/license-event-hub';
import { lastEventIdOf, serialsOf } from '../push/sse';

@ApiTags('revocation')
@Controller(routes('licenses'))
export class LicenseEventsController {
  constructor(private readonly hub: LicenseEventHub) {}

  @Get('events')
  @Operation({
    id: 'streamLicenseEvents',
    summary: 'Follow serials (Server-Sent Events)',
    description:
      'A `text/event-stream` that pushes, within about a second, every `license.revoked`, ' +
      '`license.suspended`, `license.reinstated` and `license.expired` of the listed serials of ' +
      `the caller's organization (1 to ${MAX_SERIALS_PER_STREAM}, comma-separated). A serial of another ` +
      "organization, or of none, is accepted and never produces an event. Each event's `id` is " +
      'its position in the event stream; reconnecting with `Last-Event-ID` delivers what was ' +
      `missed (up to ${MAX_REPLAY} of the organization's license events; beyond that, or older than ` +
      'the stream keeps, a `reset` event says to re-check with check-revocation). The first event, ' +
      '`ready`, carries the current position as its id. A comment line is sent every ' +
      `${HEARTBEAT_MS / 1000} s; the server ends a stream after about an hour, on shutdown, and at once when its API key or token is revoked; the ` +
      'client reconnects with its `Last-Event-ID`. A license token follows its own serial only; ' +
      "another serial is accepted and never produces an event, as another organization's.",
  })
  @AllowScopes('read', 'client', 'license')
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description:
      'Events `ready`, `reset` (data `{reason}`) and the license events (data: ' +
      '`{type, serial, status, occurred_at, revoked_at, valid_until}`), each with an `id`',
    schema: { type: 'string' },
  })
  @ApiProblems()
  async events(
    @Query() query: LicenseEventsQueryDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.hub.accept();
    // From here on Fastify leaves the response alone: it stays open for as long as the client reads.
    reply.hijack();
    request.raw.socket.setTimeout(0);
    request.raw.socket.setNoDelay(true);
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      ...(request.rateLimit ? rateLimitHeaders(request.rateLimit) : {}),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // nginx (and ingresses built on it) would otherwise buffer the stream.
      'x-accel-buffering': 'no',
    });
    await this.hub.open(reply.raw, {
      orgId: request.auth!.orgId,
      credentialHash: hashApiKey(bearerKeyOf(request.headers.authorization) ?? ''),
      serials: reachableSerials(serialsOf(query.serials), request),
      lastEventId: lastEventIdOf(request.headers['last-event-id']),
    });
  }
}

/** A license token follows its own serial only; any other is dropped, as another organization's would never be heard of. */
function reachableSerials(serials: string[], request: FastifyRequest): string[] {
  const own = request.auth?.license?.serial;
  return own === undefined ? serials : serials.filter((serial) => serial === own);
}
