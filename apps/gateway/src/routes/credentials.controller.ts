import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyRequest } from 'fastify';
import {
  CreateLicenseTokenDto,
  CreatedLicenseTokenView,
  LicenseTokenListView,
  MessageView,
  Messages,
  OrganizationView,
  PageQueryDto,
  UpdateOrganizationDto,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { Answers } from '../http/answers';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { OrganizationSettingsService } from '../identity/organization-settings.service';
import { AllowScopes } from '../http/route-access';

/**
 * License tokens: what a shipped application holds instead of an organization key. The license
 * service owns them; these routes forward.
 */
@ApiTags('license-tokens')
@Controller()
export class LicenseTokensController {
  constructor(private readonly bus: BusClient) {}

  @Post(routes('licenses/:id/tokens'))
  @Operation({
    id: 'createLicenseToken',
    summary: 'Create a license token',
    description:
      'Issues a token (`lt_…`) that acts on this license only: validate, sync, its activations (each ' +
      'answered with a machine token), heartbeats, reading the license, its public key and revocation ' +
      'list, and the push stream of its serial. Anything naming another license is answered `404` (or ' +
      '`NOT_FOUND`), as for another organization; every other route is `403`. Ship it with the ' +
      'application in place of an API key. The token is in this answer only.',
    example: { name: 'photo-editor on ada-laptop', expires_at: '2027-12-31T00:00:00.000Z' },
  })
  @Idempotent({ secretFields: ['token'] })
  @Answers(Messages.credential.createLicenseToken, {
    status: 201,
    description: '`token` is shown only in this response',
  })
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  create(
    @Param('id', uuidParam) licenseId: string,
    @Body() dto: CreateLicenseTokenDto,
  ): Promise<CreatedLicenseTokenView> {
    return this.bus.send(Messages.credential.createLicenseToken, { ...dto, license_id: licenseId });
  }

  @Get(routes('licenses/:id/tokens'))
  @Operation({
    id: 'listLicenseTokens',
    summary: "List a license's tokens",
    description:
      "The license's tokens that are not revoked, newest first: names and prefixes, never a token.",
  })
  @AllowScopes('read')
  @Answers(Messages.credential.listLicenseTokens)
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  list(
    @Param('id', uuidParam) licenseId: string,
    @Query() query: PageQueryDto,
  ): Promise<LicenseTokenListView> {
    return this.bus.send(Messages.credential.listLicenseTokens, { ...query, license_id: licenseId });
  }

  @Delete(routes('license-tokens/:id'))
  @Operation({
    id: 'revokeLicenseToken',
    summary: 'Revoke a license token',
    description:
      'Revokes the token at once, on every gateway. Machine tokens it obtained keep working until their activations end.',
  })
  @HttpCode(200)
  @Answers(Messages.credential.revokeLicenseToken)
  @ApiProblems(['not_found', 'the token does not exist in the organization, or is already revoked'])
  revoke(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.credential.revokeLicenseToken, { id });
  }
}

@ApiTags('organizations')
@Controller(routes('organizations'))
export class OrganizationController {
  constructor(private readonly organizations: OrganizationSettingsService) {}

  @Get('current')
  @Operation({
    id: 'getCurrentOrganization',
    summary: "Get the caller's organization",
    description: 'The organization and its settings.',
  })
  @AllowScopes('read')
  @ApiOkResponse({ type: OrganizationView })
  @ApiProblems()
  get(@Req() request: FastifyRequest): Promise<OrganizationView> {
    return this.organizations.current(request.auth!.orgId);
  }

  @Patch('current')
  @Operation({
    id: 'updateCurrentOrganization',
    summary: "Change the caller's organization's settings",
    description:
      '`client_keys_license_actions: false` closes the routes that act on one license (activations, ' +
      'heartbeats, validate with a fingerprint, sync, usage, checkouts) to `client` keys, so that only ' +
      'license and machine tokens reach them. `checkout_ttl_seconds` is how long an air-gapped activation ' +
      'file stays valid, and a checked-out license file when the checkout names no `ttl_seconds` (30 days ' +
      'by default). Applies on every gateway at once.',
    example: { client_keys_license_actions: false },
  })
  @ApiOkResponse({ type: OrganizationView })
  @ApiProblems()
  update(@Req() request: FastifyRequest, @Body() changes: UpdateOrganizationDto): Promise<OrganizationView> {
    return this.organizations.update(request.auth!.orgId, changes);
  }
}
