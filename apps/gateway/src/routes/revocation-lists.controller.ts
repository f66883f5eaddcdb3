import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { Messages, RevocationListQueryDto } from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { AllowScopes, ReachOf } from '../http/route-access';
import { versionTag, versionsOf } from './entity-tags';

@ApiTags('revocation')
@Controller(routes('products'))
export class RevocationListsController {
  constructor(
    private readonly bus: BusClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get(':id/revocation-list')
  @Operation({
    id: 'getRevocationList',
    summary: "Get a product's signed revocation list",
    description:
      'Every license of the product that is not active (revoked, suspended, expired) as a compact ' +
      "JWS signed with the product's key pair (`typ: licensing-revocation-list+jwt`, `kid`: the key " +
      'pair id), for applications that are rarely online: they verify it offline with the public ' +
      'key they ship with. `version` grows with every revoke, suspend, reinstate and expiry of a ' +
      'license of the product; a revocation is in the list as soon as its `DELETE` has returned. ' +
      'With `since`, the answer is a signed delta from that version ' +
      '(`typ: licensing-revocation-delta+jwt`): entries added or changed, and serials `removed`. The ' +
      '`ETag` is the version: `If-None-Match` with the current one answers `304`. Answers may be ' +
      'cached by shared caches (`Cache-Control: public`, `Vary: Authorization`).',
  })
  @AllowScopes('read', 'client', 'license')
  @ReachOf('product')
  @ApiProduces('application/jose')
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'The ETag of the list held: `"<version>"`',
  })
  @ApiOkResponse({
    description: 'The signed list (or delta): a compact JWS',
    schema: {
      type: 'string',
      example: 'eyJhbGciOiJFZERTQSIsInR5cCI6ImxpY2Vuc2luZy1yZXZvY2F0aW9uLWxpc3Qrand0In0.e30.c2ln',
    },
    headers: {
      ETag: { description: 'The version of the list: `"<version>"`', schema: { type: 'string' } },
      'Cache-Control': { description: '`public, max-age=<seconds>`', schema: { type: 'string' } },
    },
  })
  @ApiResponse({ status: 304, description: 'The version named by If-None-Match is current' })
  @ApiProblems(
    ['not_found', 'the product does not exist in the organization'],
    ['key_pair_missing', 'the product has no key pair to sign its list'],
  )
  async get(
    @Param('id', uuidParam) id: string,
    @Query() query: RevocationListQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { version, jws } = await this.bus.send(Messages.license.revocationList, {
      product_id: id,
      since: query.since,
      known_versions: versionsOf(ifNoneMatch),
    });
    void reply
      .header('etag', versionTag(version))
      .header('cache-control', `public, max-age=${this.config.REVOCATION_LIST_MAX_AGE_SECONDS}`)
      // A shared cache keeps one copy per API key: another organization's key never gets this one.
      .header('vary', 'authorization');
    if (jws === null) return void reply.status(304).send();
    return void reply.type('application/jose').send(jws);
  }
}
