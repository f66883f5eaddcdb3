import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import {
  CreateRelayFileDto,
  ImportRelayReportDto,
  ListRelayFilesQueryDto,
  Messages,
  RelayFileCreatedView,
  RelayFileListView,
  RelayFileView,
  RelayReportImportView,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { Answers } from '../http/answers';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { AllowScopes } from '../http/route-access';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { OrganizationLimitsService } from '../identity/organization-limits.service';

/**
 * Relays: on-premise servers that lease a floating license's seats on a network with no internet.
 * The vendor issues a relay's file here and imports its usage reports. The license service owns both.
 */
@ApiTags('relays')
@Controller()
export class RelaysController {
  constructor(
    private readonly bus: BusClient,
    private readonly organizations: OrganizationLimitsService,
  ) {}

  @Post(routes('licenses/:id/relay-files'))
  @Operation({
    id: 'createRelayFile',
    summary: 'Issue a relay file',
    description:
      "Signs a relay file for a `floating` license: a license file signed now with the product's current " +
      'key, as a checkout is (the license as it is now, `iat`, `exp` `ttl_seconds` from now and never ' +
      'after `valid_until`, `entitlements`, `policy`), with one more claim, `relay: {id, site, public_key}`, ' +
      "naming the relay it is issued to. `public_key` is the relay's Ed25519 key (PEM SPKI) from its relay " +
      "request; it verifies the relay's usage reports. The file is in this answer only. A license of another " +
      'type is `422 license_not_floating`; a revoked, suspended or expired one `422 license_not_active`.',
    example: {
      site: 'plant-7-floor-2',
      public_key: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA…\n-----END PUBLIC KEY-----\n',
      ttl_seconds: 2_592_000,
    },
  })
  @Idempotent()
  @Answers(Messages.relay.createFile, {
    status: 201,
    description: 'The relay file (`relay_file`, shown only here) and its record',
  })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['license_not_floating', 'the license is not `floating`'],
    ['license_not_active', 'the license is revoked, suspended or expired'],
    ['key_pair_missing', 'the product has no key pair to sign with'],
  )
  async create(
    @Req() request: FastifyRequest,
    @Param('id', uuidParam) licenseId: string,
    @Body() dto: CreateRelayFileDto,
  ): Promise<RelayFileCreatedView> {
    const ttl_seconds =
      dto.ttl_seconds ?? (await this.organizations.settingsOf(request.auth!.orgId)).checkoutTtlSeconds;
    return this.bus.send(Messages.relay.createFile, { ...dto, ttl_seconds, license_id: licenseId });
  }

  @Get(routes('relay-files'))
  @Operation({
    id: 'listRelayFiles',
    summary: 'List relay files',
    description:
      "The organization's relay files, newest first, a page at a time, without the files themselves. " +
      'Filter: `license_id` (an unknown one gives an empty list).',
  })
  @AllowScopes('read')
  @Answers(Messages.relay.listFiles)
  @ApiProblems()
  list(@Query() query: ListRelayFilesQueryDto): Promise<RelayFileListView> {
    return this.bus.send(Messages.relay.listFiles, query);
  }

  @Get(routes('relay-files/:id'))
  @Operation({
    id: 'getRelayFile',
    summary: 'Get a relay file',
    description: 'One relay file of the organization, without the file itself.',
  })
  @AllowScopes('read')
  @Answers(Messages.relay.getFile)
  @ApiProblems(['not_found', 'the relay file does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<RelayFileView> {
    return this.bus.send(Messages.relay.getFile, { id });
  }

  @Post(routes('relay-reports'))
  @Operation({
    id: 'importRelayReport',
    summary: 'Import a relay report',
    description:
      "Verifies a relay's usage report (a compact JWS whose `kid` is the relay file id) with the public " +
      'key its relay file was issued to, then hands each lease to analytics as one usage report: id a ' +
      "UUID v5 of the lease id in the relay file id's namespace, received at the lease's `leased_at`, its " +
      'fingerprint and `seats_in_use`. A lease uploaded again, in the same report or another, is counted ' +
      'once. Answers once every lease is stored in the durable stream analytics reads.',
    example: {
      report: 'eyJhbGciOiJFZERTQSIsInR5cCI6InJlbGF5LXJlcG9ydCtqd3MiLCJraWQiOiIuLi4ifQ.eyJ2IjoxfQ.c2ln',
    },
  })
  @HttpCode(200)
  @Answers(Messages.relay.importReport, {
    description: 'The report, its leases, and the leases handed to analytics',
  })
  @ApiProblems(
    ['not_found', "the report's relay file (`kid`) does not exist in the organization"],
    [
      'report_signature_invalid',
      "the report is malformed, or its signature does not verify with the relay file's key",
    ],
    ['report_serial_mismatch', "the report's `serial` is not the serial of the relay file's license"],
  )
  importReport(@Body() dto: ImportRelayReportDto): Promise<RelayReportImportView> {
    return this.bus.send(Messages.relay.importReport, dto);
  }
}
