import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import {
  ActivationListView,
  ActivationView,
  CheckoutDto,
  CheckoutView,
  CreateActivationDto,
  CreatedActivationView,
  ListActivationsQueryDto,
  MessageView,
  Messages,
  OfflineActivationDto,
  OfflineActivationView,
  OfflineReleaseDto,
  CreateProcessDto,
  PageQueryDto,
  ProcessListView,
  ProcessView,
} from '@licensing/contracts';
import { BusClient, JsonText } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { Answers } from '../http/answers';
import { Direct } from '../http/direct';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { CHECKOUT_DESCRIPTION } from './licenses.controller';
import { AllowScopes, LicenseAction } from '../http/route-access';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { LimitPerLicense } from '../rate-limits/rate-limit.hook';

@ApiTags('activations')
@Controller(routes('activations'))
export class ActivationsController {
  constructor(
    private readonly bus: BusClient,
    private readonly organizations: OrganizationLimitsService,
  ) {}

  @Post()
  @Operation({
    id: 'createActivation',
    summary: 'Activate a machine (take a seat)',
    description:
      'Gives the machine `fingerprint` a seat of the license named by `license_id` or by its serial ' +
      '(`license_key`). `201` with a new activation; `200` with the existing one when this fingerprint ' +
      "already holds a seat. Seats are the license's `max_seats`, capped by the product's " +
      '`max_concurrent_activations`, and hold under concurrency. When the product has an ' +
      '`activation_heartbeat_interval`, the seat lapses at `expires_at` unless heartbeats keep it. ' +
      'A license is granted at most `3 × max_seats` (at least 10) new activations in any 24 h, online ' +
      'and air-gapped together (`429` with `Retry-After` beyond). Made with a license token, the ' +
      'answer carries a `machine_token` for this activation (a new one each time; the previous one ' +
      'stops working). Binding a `node_locked` license (its first activation) needs its license ' +
      'token or an admin key. Publishes `activation.created`.',
    example: {
      license_key: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
      fingerprint: 'machine-a',
      hostname: 'ada-laptop',
      platform: 'linux-x64',
    },
  })
  @Idempotent({ secretFields: ['machine_token'] })
  @AllowScopes('client', 'license')
  @LicenseAction()
  @LimitPerLicense()
  @ApiCreatedResponse({ type: CreatedActivationView, description: 'A new seat' })
  @ApiOkResponse({
    type: CreatedActivationView,
    description: 'This fingerprint already held a seat: the same activation',
  })
  @ApiProblems(
    ['not_found', "the license does not exist in the organization (or is not the token's)"],
    ['seat_limit_reached', 'every seat of the license is taken'],
    ['license_not_active', 'the license is revoked, suspended or expired'],
    ['fingerprint_mismatch', "the license is bound to another machine's fingerprint"],
    ['forbidden', 'binding a node-locked license needs its license token or an admin key'],
    ['rate_limited', 'the license was granted its cap of activations in the last 24 h'],
  )
  @Direct()
  async create(
    @Body() dto: CreateActivationDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CreatedActivationView> {
    const { activation, created, machine_token } = await this.bus.send(Messages.activation.create, dto);
    void reply.status(created ? 201 : 200);
    return machine_token === undefined ? activation : { ...activation, machine_token };
  }

  @Post('offline')
  @Operation({
    id: 'createOfflineActivation',
    summary: 'Activate an air-gapped machine (take a seat)',
    description:
      'Takes the activation request file an air-gapped machine wrote (`createActivationRequest()` of ' +
      "the SDK: the license, the machine's fingerprint and components, a nonce and the machine's own " +
      'Ed25519 public key, signed with that key) and answers a signed activation file (compact JWS, ' +
      "`typ` `activation+jwt`, signed with the product's key) that binds the license to that " +
      "fingerprint until `expires_at`: the organization's checkout TTL (30 days by default; " +
      '`valid_days` may shorten it), never past the license. The machine renews it with a new request ' +
      'before then. The seat counts like an online activation, under the same limits and lock, and ' +
      'lapses at `expires_at`. `201` for a new seat; `200` when the machine already holds it under ' +
      'the same key (the seat is renewed). Publishes `activation.created`.',
    example: {
      request: 'eyJhbGciOiJFZERTQSIsInR5cCI6ImFjdGl2YXRpb24tcmVxdWVzdCtqd3QifQ.eyJ2IjoxfQ.c2ln',
      valid_days: 90,
    },
  })
  @Idempotent()
  @AllowScopes('client', 'license')
  @LicenseAction()
  @ApiCreatedResponse({ type: OfflineActivationView, description: 'A new seat, and its activation file' })
  @ApiOkResponse({
    type: OfflineActivationView,
    description: 'This machine already held the seat under the same key: renewed, with a new file',
  })
  @ApiProblems(
    ['validation_failed', 'the request file is malformed, or not signed by the key it carries'],
    ['not_found', 'the license does not exist in the organization'],
    ['seat_limit_reached', 'every seat of the license is taken'],
    ['license_not_active', 'the license is revoked, suspended or expired'],
    ['fingerprint_mismatch', "the license is bound to another machine's fingerprint"],
    ['conflict', 'the fingerprint holds a seat online or under another machine key'],
    ['rate_limited', 'the license was granted its cap of activations in the last 24 h'],
  )
  async createOffline(
    @Req() request: FastifyRequest,
    @Body() dto: OfflineActivationDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OfflineActivationView> {
    const { checkoutTtlSeconds } = await this.organizations.settingsOf(request.auth!.orgId);
    const { created, ...answer } = await this.bus.send(Messages.activation.offlineCreate, {
      ...dto,
      ttl_seconds: checkoutTtlSeconds,
    });
    void reply.status(created ? 201 : 200);
    return answer;
  }

  @Post('offline/release')
  @Operation({
    id: 'releaseOfflineActivation',
    summary: "Release an air-gapped machine's seat",
    description:
      "Takes the release file the machine wrote (`createActivationRelease()` of the SDK: the activation's " +
      "id, signed with the machine's key from its request) and frees the seat. A release of an " +
      'activation that holds no seat any more (released already, lapsed) changes nothing and answers ' +
      '`200`. Publishes `activation.deleted`.',
    example: { release: 'eyJhbGciOiJFZERTQSIsInR5cCI6ImFjdGl2YXRpb24tcmVsZWFzZStqd3QifQ.eyJ2IjoxfQ.c2ln' },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license')
  @LicenseAction()
  @Answers(Messages.activation.offlineRelease)
  @ApiProblems(
    ['validation_failed', "the release file is malformed, or not signed by the activation's machine key"],
    ['conflict', 'the activation is an online one'],
  )
  releaseOffline(@Body() dto: OfflineReleaseDto): Promise<MessageView> {
    return this.bus.send(Messages.activation.offlineRelease, dto);
  }

  @Get()
  @Operation({
    id: 'listActivations',
    summary: 'List activations',
    description:
      "The organization's activations, newest first, a page at a time, optionally of one license, by " +
      'id (`license_id`) or by serial (`license_key`); an unknown one, or two naming different ' +
      'licenses, give an empty list. Lapsed activations are listed until the ' +
      "sweeper removes them, within about a second. A license token lists its own license's only.",
  })
  @AllowScopes('read', 'license')
  @Answers(Messages.activation.list)
  @ApiProblems()
  list(@Query() query: ListActivationsQueryDto): Promise<ActivationListView> {
    return this.bus.send(Messages.activation.list, query);
  }

  @Post(':id/heartbeat')
  @Operation({
    id: 'heartbeatActivation',
    summary: 'Keep a seat alive',
    description:
      "Moves the activation's `expires_at` to now plus the heartbeat interval: its policy's " +
      "`heartbeat_interval_seconds`, or the product's `activation_heartbeat_interval` without a policy. " +
      "In its policy's `heartbeat_grace_seconds` after `expires_at`, a heartbeat revives it; past " +
      'them it has lost its seat and cannot be revived (`404`): the machine activates again.',
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.activation.heartbeat, { description: 'expires_at moved to now + the heartbeat interval' })
  @ApiProblems(
    ['not_found', 'the activation does not exist in the organization, or has lapsed'],
    ['license_not_active', 'the license is revoked, suspended or expired'],
  )
  @Direct()
  heartbeat(@Param('id', uuidParam) id: string): Promise<JsonText<ActivationView>> {
    return this.bus.forward(Messages.activation.heartbeat, { id });
  }

  @Post(':id/processes')
  @Operation({
    id: 'createProcess',
    summary: 'Start a process on a machine (take a process slot)',
    description:
      "Records process `pid` on the activation's machine. `201` with a new process; `200` with the " +
      "existing one when this pid already holds a slot. The license's policy limits the processes per " +
      'machine (`max_processes`; no limit without one), and this holds under concurrency. A process ' +
      "lapses like its machine, by the policy's `heartbeat_interval_seconds` and grace (the product's " +
      'interval for a license without a policy): heartbeats keep it. A license token reaches the ' +
      "processes of its own license's activations, a machine token those of its own activation.",
    example: { pid: 4242 },
  })
  @Idempotent()
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @ApiCreatedResponse({ type: ProcessView, description: 'A new process' })
  @ApiOkResponse({ type: ProcessView, description: 'This pid already held a slot: the same process' })
  @ApiProblems(
    ['not_found', "the activation does not exist in the organization (or is not the token's), or has lapsed"],
    ['process_limit_reached', "every process slot of the machine is taken (the policy's max_processes)"],
    ['license_not_active', 'the license is revoked, suspended or expired'],
  )
  async createProcess(
    @Param('id', uuidParam) id: string,
    @Body() dto: CreateProcessDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ProcessView> {
    const { process, created } = await this.bus.send(Messages.process.create, { ...dto, activation_id: id });
    void reply.status(created ? 201 : 200);
    return process;
  }

  @Get(':id/processes')
  @Operation({
    id: 'listProcesses',
    summary: "List a machine's processes",
    description:
      "The activation's processes, newest first, a page at a time. Lapsed ones are listed until the " +
      'sweeper removes them.',
  })
  @AllowScopes('read', 'license', 'machine')
  @Answers(Messages.process.list)
  @ApiProblems(['not_found', "the activation does not exist in the organization (or is not the token's)"])
  listProcesses(@Param('id', uuidParam) id: string, @Query() query: PageQueryDto): Promise<ProcessListView> {
    return this.bus.send(Messages.process.list, { ...query, activation_id: id });
  }

  @Post(':id/processes/:process_id/heartbeat')
  @Operation({
    id: 'heartbeatProcess',
    summary: 'Keep a process alive',
    description:
      "Moves the process's `expires_at` to now plus the heartbeat interval. A process past its " +
      "`expires_at` and its policy's grace has lost its slot (`404`): it starts again.",
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.process.heartbeat, { description: 'expires_at moved to now + the heartbeat interval' })
  @ApiProblems(
    ['not_found', "the activation or the process does not exist (or is not the token's), or has lapsed"],
    ['license_not_active', 'the license is revoked, suspended or expired'],
  )
  heartbeatProcess(
    @Param('id', uuidParam) id: string,
    @Param('process_id', uuidParam) processId: string,
  ): Promise<ProcessView> {
    return this.bus.send(Messages.process.heartbeat, { activation_id: id, id: processId });
  }

  @Delete(':id/processes/:process_id')
  @Operation({
    id: 'deleteProcess',
    summary: 'End a process',
    description: 'Deletes the process and frees its slot at once.',
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.process.delete)
  @ApiProblems(['not_found', "the activation or the process does not exist (or is not the token's)"])
  deleteProcess(
    @Param('id', uuidParam) id: string,
    @Param('process_id', uuidParam) processId: string,
  ): Promise<MessageView> {
    return this.bus.send(Messages.process.delete, { activation_id: id, id: processId });
  }

  @Post(':id/checkout')
  @Operation({
    id: 'checkoutActivation',
    summary: "Check out a license file for an activation's machine",
    description:
      `${CHECKOUT_DESCRIPTION} The file also carries the activation's \`fingerprint\`: verified on ` +
      'another machine, it fails with `fingerprint_mismatch`. A license token reaches the activations of ' +
      'its license; a machine token its own activation only. A lapsed activation is `404`.',
    example: { ttl_seconds: 604_800 },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.activation.checkout, {
    description: 'The checked-out file, bound to the fingerprint, and when it was signed and expires',
  })
  @ApiProblems(
    ['not_found', "the activation does not exist in the organization, has lapsed, or is not the token's"],
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
    return this.bus.send(Messages.activation.checkout, { id, ttl_seconds });
  }

  @Delete(':id')
  @Operation({
    id: 'deleteActivation',
    summary: 'Release a seat',
    description:
      'Deletes the activation and frees its seat at once, with its processes; its machine token stops working. An ' +
      'air-gapped seat is freed only by its signed release file, or by an admin key (`409 ' +
      'offline_activation` otherwise). Publishes `activation.deleted`.',
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.activation.delete)
  @ApiProblems(
    ['not_found', 'the activation does not exist in the organization'],
    ['offline_activation', 'an air-gapped seat: released by its release file, or by an admin key'],
  )
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.activation.delete, { id });
  }
}
