import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import {
  CheckoutDto,
  CheckoutView,
  CreateLicenseDto,
  LicenseListView,
  LicenseUsesView,
  LicenseView,
  ListLicensesQueryDto,
  MessageView,
  Messages,
  UpdateLicenseDto,
  UsageIncrementDto,
  ValidateLicenseDto,
  ValidationResultView,
  VerifyLicenseDto,
  VerifyResultView,
} from '@licensing/contracts';
import { BusClient, JsonText } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Direct } from '../http/direct';
import { Answers } from '../http/answers';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes, LicenseAction, ReachOf } from '../http/route-access';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { SignedAnswer } from '../signed-answers/answer-signing';

/** The operation text shared by the two checkout routes. */
export const CHECKOUT_DESCRIPTION =
  "A license file signed now with the product's current key, for an application that runs offline: " +
  'the license as it is now (its `entitlements` included), with `iat` the signing time and `exp` the ' +
  "file's own expiry, `ttl_seconds` from now (default: the organization's `checkout_ttl_seconds`, 30 " +
  "days unless changed), never after the license's `valid_until`. Past `exp` every verifier refuses " +
  'the file with `file_expired`: the application checks out again before then. Nothing is stored, ' +
  'and no event is published.';

@ApiTags('licenses')
@Controller(routes('licenses'))
export class LicensesController {
  constructor(
    private readonly bus: BusClient,
    private readonly organizations: OrganizationLimitsService,
  ) {}

  @Post()
  @Operation({
    id: 'createLicense',
    summary: 'Create a license',
    description:
      "Issues a license for a product and signs it with the product's key pair. With `policy_id`, the " +
      "license follows that policy: `product_id` may be left out (the policy's) or must be the policy's " +
      '(`422 policy_product_mismatch`), and `license_type`, validity and `max_seats` come from the ' +
      'policy unless the request gives them. The answer holds its ' +
      'serial (`LIC-<PRODUCT CODE>-<16 characters>`) and `license_blob`, the base64 of the `.lic` file: ' +
      'a compact JWS that any JOSE library verifies with the public key. `valid_days` and `features` ' +
      "default to the product's; `valid_days: 0` or `license_type: perpetual` means no end. A " +
      '`node_locked` license has one seat and is bound to `hardware_binding`, or to its first ' +
      'activation. `max_uses` limits the uses counted by `POST /licenses/{id}/usage` (none by ' +
      'default). A new license holds no entitlements: attach them afterwards. Publishes `license.created`.',
    example: {
      product_id: '7d9e4f2a-1b3c-4d5e-8f60-718293a4b5c6',
      customer_email: 'ada@example.com',
      license_type: 'subscription',
      valid_days: 365,
      max_seats: 1,
      features: ['pro'],
    },
  })
  @Idempotent()
  @Answers(Messages.license.create, { status: 201, description: 'The license, with its signed license_blob' })
  @ApiProblems(
    ['not_found', 'the product `product_id` or the policy `policy_id` does not exist in the organization'],
    ['key_pair_missing', 'the product has no key pair to sign with'],
    ['policy_product_mismatch', '`product_id` is not the product of the policy `policy_id`'],
  )
  @Direct()
  create(@Body() dto: CreateLicenseDto): Promise<JsonText<LicenseView>> {
    return this.bus.forward(Messages.license.create, dto);
  }

  @Get()
  @Operation({
    id: 'listLicenses',
    summary: 'List licenses',
    description:
      "The organization's licenses, newest first, a page at a time, without their `license_blob`. " +
      'Filters: `product_id`, `status` (the effective status: an active license past `valid_until` ' +
      'is `expired`) and `customer_email` (a case-insensitive substring). An unknown `product_id` ' +
      'gives an empty list.',
  })
  @AllowScopes('read')
  @Answers(Messages.license.list)
  @ApiProblems()
  list(@Query() query: ListLicensesQueryDto): Promise<LicenseListView> {
    return this.bus.send(Messages.license.list, query);
  }

  @Post('verify')
  @Operation({
    id: 'verifyLicense',
    summary: 'Verify a license file',
    description:
      'Checks a license file online: its signature (with the key pair its header names, or with ' +
      "`public_key`), that it belongs to `product_id`, its validity dates, a checked-out file's own " +
      "expiry (`file_expired`), and the stored license's current status (revoked, suspended, expired). " +
      'Always a `200` for a well-formed request: `valid` ' +
      'is true only when `errors` is empty, and `license` is the decoded summary whenever the file ' +
      'could be decoded.',
    example: {
      product_id: '7d9e4f2a-1b3c-4d5e-8f60-718293a4b5c6',
      license_blob: 'ZXlKaGJHY2lPaUpGWkVSVFFTSXNJblI1Y0NJNklteHBZMlZ1YzJVcmFuZDBJbjAuZXlKMklqb3hmUS5zaWc=',
    },
  })
  @HttpCode(200)
  @AllowScopes('read', 'client')
  @Answers(Messages.license.verify, { description: 'valid is true only when errors is empty' })
  @ApiProblems(['not_found', 'the product `product_id` does not exist in the organization'])
  @Direct()
  @SignedAnswer()
  verify(@Body() dto: VerifyLicenseDto): Promise<JsonText<VerifyResultView>> {
    return this.bus.forward(Messages.license.verify, dto);
  }

  @Post('validate')
  @Operation({
    id: 'validateLicense',
    summary: 'Validate a license key on a machine',
    description:
      'Answers whether this machine may run: by serial (`key`), and when `fingerprint` is given, ' +
      'by its activation. `code` is the first that applies of `NOT_FOUND`, `REVOKED`, `SUSPENDED`, ' +
      '`EXPIRED`, `OVERDUE` (a check-in is due), then with a fingerprint `FINGERPRINT_MISMATCH`, ' +
      "`NO_ACTIVATION`, `HEARTBEAT_DEAD`, `COMPONENTS_MISMATCH` (by the policy's `machine_matching`), " +
      'then, when `entitlements` is given, `ENTITLEMENTS_MISSING` (the license lacks one of them); ' +
      'then `OVERAGE` (the license holds more machines than its `max_seats`, as its policy allows); ' +
      'otherwise `VALID`. `valid` is true for `VALID` and `OVERAGE` only. A license token ' +
      "sees only its own license (any other key is `NOT_FOUND`); a machine token only its own machine's " +
      'activation.',
    example: { key: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC', fingerprint: 'machine-a' },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction('with_fingerprint')
  @Answers(Messages.license.validate, { description: 'valid is true only for codes VALID and OVERAGE' })
  @ApiProblems()
  @Direct()
  @SignedAnswer()
  validate(@Body() dto: ValidateLicenseDto): Promise<JsonText<ValidationResultView>> {
    return this.bus.forward(Messages.license.validate, dto);
  }

  @Get(':id')
  @Operation({
    id: 'getLicense',
    summary: 'Get a license',
    description: 'One license of the organization, with its `license_blob` and its effective status.',
  })
  @AllowScopes('read', 'license')
  @ReachOf('license')
  @Answers(Messages.license.get)
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  @Direct()
  get(@Param('id', uuidParam) id: string): Promise<LicenseView> {
    return this.bus.send(Messages.license.get, { id });
  }

  @Get(':id/download')
  @Operation({
    id: 'downloadLicense',
    summary: 'Download a license file',
    description: 'The `.lic` file itself (the compact JWS, as bytes), as an attachment named `<SERIAL>.lic`.',
  })
  @AllowScopes('read', 'license')
  @ReachOf('license')
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'The .lic file: a compact JWS',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  async download(
    @Param('id', uuidParam) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const license = await this.bus.send(Messages.license.get, { id });
    void reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${license.serial}.lic"`);
    return Buffer.from(license.license_blob!, 'base64');
  }

  @Post(':id/check-in')
  @Operation({
    id: 'checkInLicense',
    summary: 'Check a license in',
    description:
      "Records that the license's application is in touch now (`last_check_in_at`). When the license's " +
      'policy sets `check_in_interval_days`, validate answers `OVERDUE` once the last check-in (or the ' +
      "license's creation, before the first) is older than that. A license token checks in its own " +
      'license only. Publishes `license.checked_in`.',
  })
  @HttpCode(200)
  @AllowScopes('client', 'license')
  @ReachOf('license')
  @LicenseAction()
  @Answers(Messages.license.checkIn, { description: 'The license, with its new last_check_in_at' })
  @ApiProblems(
    ['not_found', "the license does not exist in the organization (or is not the token's)"],
    ['license_not_active', 'the license is revoked, suspended or expired'],
  )
  checkIn(@Param('id', uuidParam) id: string): Promise<LicenseView> {
    return this.bus.send(Messages.license.checkIn, { id });
  }

  @Patch(':id')
  @Operation({
    id: 'updateLicense',
    summary: 'Change a license',
    description:
      'Changes any of `customer_id`, `customer_email`, `features`, `max_seats`, `max_uses`, ' +
      '`valid_until`, `hardware_binding` and `status` (`active` or `suspended` only); `null` clears the customer ' +
      'fields and the binding, and makes `valid_until` perpetual. The license is signed again: the ' +
      'answer holds a new `license_blob`. Check-revocation and sync see a new status at once. ' +
      'Publishes `license.updated`, `license.suspended` or `license.reinstated`.',
    example: { status: 'active', max_seats: 5, valid_until: '2030-01-01T00:00:00.000Z' },
  })
  @Answers(Messages.license.update, { description: 'The changed license, signed again (new license_blob)' })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['conflict', 'the license is revoked, or expired and `valid_until` does not move into the future'],
  )
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateLicenseDto): Promise<LicenseView> {
    return this.bus.send(Messages.license.update, { id, changes });
  }

  @Delete(':id')
  @Operation({
    id: 'revokeLicense',
    summary: 'Revoke a license',
    description:
      'Revokes a license for good: verify, validate, check-revocation and sync answer `revoked` as ' +
      'soon as this returns, on every gateway. Repeating it is a `200` that keeps the first ' +
      '`revoked_at`. Publishes `license.revoked` (the first time only).',
  })
  @HttpCode(200)
  @Answers(Messages.license.revoke)
  @ApiProblems(['not_found', 'the license does not exist in the organization'])
  revoke(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.license.revoke, { id });
  }

  @Post(':id/usage')
  @Operation({
    id: 'incrementLicenseUsage',
    summary: 'Count uses of a license',
    description:
      "Adds `increment` (1 by default) to the license's `uses`. An increment that would take `uses` " +
      'past `max_uses` is refused with `422 usage_limit_exceeded` and changes nothing, exactly, however ' +
      'many increments run at once. A revoked, suspended or expired license is `422 license_not_active`. ' +
      'A license token counts for its own license only. Publishes `license.usage_incremented`, which ' +
      'analytics counts once. Send an `Idempotency-Key` to retry safely: a replay does not count again.',
    example: { increment: 1 },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license')
  @ReachOf('license')
  @LicenseAction()
  @Idempotent()
  @Answers(Messages.license.incrementUsage, { description: 'The uses counted, and the limit' })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['license_not_active', 'the license is revoked, suspended or expired'],
    [
      'usage_limit_exceeded',
      "the increment would take `uses` past the license's `max_uses`; nothing changed",
    ],
  )
  incrementUsage(
    @Param('id', uuidParam) id: string,
    @Body() dto: UsageIncrementDto,
  ): Promise<LicenseUsesView> {
    return this.bus.send(Messages.license.incrementUsage, { ...dto, id });
  }

  @Delete(':id/usage')
  @Operation({
    id: 'resetLicenseUsage',
    summary: "Reset a license's uses",
    description: "Sets the license's `uses` back to 0 (`max_uses` is kept). Publishes `license.usage_reset`.",
  })
  @HttpCode(200)
  @Answers(Messages.license.resetUsage, { description: 'The uses counted (0), and the limit' })
  @ApiProblems(
    ['not_found', 'the license does not exist in the organization'],
    ['conflict', 'the license is revoked'],
  )
  resetUsage(@Param('id', uuidParam) id: string): Promise<LicenseUsesView> {
    return this.bus.send(Messages.license.resetUsage, { id });
  }

  @Post(':id/checkout')
  @Operation({
    id: 'checkoutLicense',
    summary: 'Check out a license file',
    description:
      `${CHECKOUT_DESCRIPTION} A license token checks out its own license only; a machine token uses ` +
      "its activation's checkout.",
    example: { ttl_seconds: 604_800 },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license')
  @ReachOf('license')
  @LicenseAction()
  @Answers(Messages.license.checkout, {
    description: 'The checked-out file, and when it was signed and expires',
  })
  @ApiProblems(
    ['not_found', "the license does not exist in the organization (or is not the token's)"],
    ['license_not_active', 'the license is revoked, suspended or expired'],
    ['key_pair_missing', 'the product has no key pair to sign with'],
  )
  async checkout(
    @Req() request: FastifyRequest,
    @Param('id', uuidParam) id: string,
    @Body() dto: CheckoutDto,
  ): Promise<CheckoutView> {
    const ttl_seconds =
      dto.ttl_seconds ?? (await this.organizations.settingsOf(request.auth!.orgId)).checkoutTtlSeconds;
    return this.bus.send(Messages.license.checkout, { id, ttl_seconds });
  }
}
