import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateEntitlementDto,
  EntitlementListView,
  EntitlementView,
  LicenseEntitlementsDto,
  LicenseView,
  MessageView,
  Messages,
  PageQueryDto,
  UpdateEntitlementDto,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Answers } from '../http/answers';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../http/route-access';

/** The organization's entitlement catalog. The license service owns it; these routes forward. */
@ApiTags('entitlements')
@Controller(routes('entitlements'))
export class EntitlementsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Operation({
    id: 'createEntitlement',
    summary: 'Create an entitlement',
    description:
      'Adds a capability to the catalog, which licenses then hold by its `code`: lowercase letters ' +
      'and digits in parts joined by one `.`, `_` or `-`, unique in the organization and immutable. ' +
      'Publishes `entitlement.created`.',
    example: { code: 'export.pdf', name: 'Export to PDF' },
  })
  @Idempotent()
  @Answers(Messages.entitlement.create, { status: 201, description: 'The new entitlement' })
  @ApiProblems(['conflict', 'the organization has an entitlement with this `code` already'])
  create(@Body() dto: CreateEntitlementDto): Promise<EntitlementView> {
    return this.bus.send(Messages.entitlement.create, dto);
  }

  @Get()
  @Operation({
    id: 'listEntitlements',
    summary: 'List entitlements',
    description: "The organization's entitlements, newest first, a page at a time.",
  })
  @AllowScopes('read')
  @Answers(Messages.entitlement.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<EntitlementListView> {
    return this.bus.send(Messages.entitlement.list, query);
  }

  @Get(':id')
  @Operation({ id: 'getEntitlement', summary: 'Get an entitlement', description: 'One entitlement.' })
  @AllowScopes('read')
  @Answers(Messages.entitlement.get)
  @ApiProblems(['not_found', 'the entitlement does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<EntitlementView> {
    return this.bus.send(Messages.entitlement.get, { id });
  }

  @Patch(':id')
  @Operation({
    id: 'updateEntitlement',
    summary: 'Rename an entitlement',
    description:
      'Changes `name`. The `code` never changes (`400` when sent, even unchanged), since license files ' +
      'carry it. Publishes `entitlement.updated`.',
    example: { name: 'Export to PDF and PDF/A' },
  })
  @Answers(Messages.entitlement.update)
  @ApiProblems(['not_found', 'the entitlement does not exist in the organization'])
  update(
    @Param('id', uuidParam) id: string,
    @Body() changes: UpdateEntitlementDto,
  ): Promise<EntitlementView> {
    return this.bus.send(Messages.entitlement.update, { id, changes });
  }

  @Delete(':id')
  @Operation({
    id: 'deleteEntitlement',
    summary: 'Delete an entitlement',
    description:
      'Deletes an entitlement for good. Refused while a license holds it of its own or a policy ' +
      'grants it: detach it, or take it out of the policy, first. ' +
      'Publishes `entitlement.deleted`.',
  })
  @HttpCode(200)
  @Answers(Messages.entitlement.delete)
  @ApiProblems(
    ['not_found', 'the entitlement does not exist in the organization'],
    ['conflict', 'a license holds the entitlement, or a policy grants it'],
  )
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.entitlement.delete, { id });
  }
}

/** The entitlements one license holds: served beside the license routes. */
@ApiTags('entitlements')
@Controller()
export class LicenseEntitlementsController {
  constructor(private readonly bus: BusClient) {}

  @Post(routes('licenses/:id/entitlements'))
  @Operation({
    id: 'attachLicenseEntitlements',
    summary: 'Attach entitlements to a license',
    description:
      'Adds entitlements of the catalog, by code, to the license. Codes it holds already are left as ' +
      'they are; a code its policy grants becomes its own too, and stays if the policy drops it. ' +
      'When its entitlements change the license is signed again: the answer holds a new ' +
      '`license_blob` whose `entitlements` claim lists them. Files downloaded before keep their claims. ' +
      'Publishes `license.updated` (nothing when nothing changed).',
    example: { codes: ['export.pdf', 'cloud-sync'] },
  })
  @HttpCode(200)
  @Answers(Messages.license.attachEntitlements, {
    description: 'The license with its entitlements, signed again (new license_blob)',
  })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['conflict', 'the license is revoked'],
    ['unknown_entitlement', 'a code is not an entitlement of the organization; `detail` names each one'],
  )
  attach(@Param('id', uuidParam) id: string, @Body() dto: LicenseEntitlementsDto): Promise<LicenseView> {
    return this.bus.send(Messages.license.attachEntitlements, { ...dto, id });
  }

  @Delete(routes('licenses/:id/entitlements'))
  @Operation({
    id: 'detachLicenseEntitlements',
    summary: 'Detach entitlements from a license',
    description:
      'Removes entitlements, by code, from the license; codes of the catalog it does not hold are left ' +
      'alone. A code its policy grants stays in `entitlements`: change the policy to take it away. ' +
      'When its entitlements change the license is signed again, as for attach. Publishes ' +
      '`license.updated` (nothing when nothing changed).',
    example: { codes: ['cloud-sync'] },
  })
  @HttpCode(200)
  @Answers(Messages.license.detachEntitlements, {
    description: 'The license with its entitlements, signed again (new license_blob)',
  })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['conflict', 'the license is revoked'],
    ['unknown_entitlement', 'a code is not an entitlement of the organization; `detail` names each one'],
  )
  detach(@Param('id', uuidParam) id: string, @Body() dto: LicenseEntitlementsDto): Promise<LicenseView> {
    return this.bus.send(Messages.license.detachEntitlements, { ...dto, id });
  }
}
