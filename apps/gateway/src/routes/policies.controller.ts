import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreatePolicyDto,
  ListPoliciesQueryDto,
  MessageView,
  Messages,
  PolicyListView,
  PolicyView,
  UpdatePolicyDto,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Answers } from '../http/answers';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../http/route-access';

@ApiTags('policies')
@Controller(routes('policies'))
export class PoliciesController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Operation({
    id: 'createPolicy',
    summary: 'Create a policy',
    description:
      "Creates a licensing model for a product. A license created with `policy_id` takes the policy's " +
      "`license_type`, its validity (`duration_days`, which defaults to the product's " +
      '`default_valid_days`; `null` is perpetual), `max_seats` (`max_machines`) and `max_uses` unless ' +
      "the request gives them. Its licenses hold the policy's `entitlements` beside their own. The " +
      'other limits (processes per machine, heartbeat interval and grace, check-in interval, overage, ' +
      'component matching, `uses_reset`) apply to its licenses on every online path, and a change ' +
      'applies at once. With `uses_reset`, the `uses` of its licenses go back to 0 at each UTC day, ' +
      'ISO week (Monday 00:00 UTC) or month. Publishes `policy.created`.',
    example: {
      product_id: '7d9e4f2a-1b3c-4d5e-8f60-718293a4b5c6',
      name: 'Floating, 5 machines',
      license_type: 'floating',
      duration_days: 365,
      max_machines: 5,
      max_processes: 2,
      heartbeat_interval_seconds: 600,
      heartbeat_grace_seconds: 300,
      overage: '1.25x',
      machine_matching: 'most',
      max_uses: 10000,
      uses_reset: 'month',
      entitlements: ['export.pdf'],
    },
  })
  @Idempotent()
  @Answers(Messages.policy.create, { status: 201 })
  @ApiProblems(
    ['not_found', 'the product `product_id` does not exist in the organization'],
    ['unknown_entitlement', 'a code is not an entitlement of the organization; `detail` names each one'],
  )
  create(@Body() dto: CreatePolicyDto): Promise<PolicyView> {
    return this.bus.send(Messages.policy.create, dto);
  }

  @Get()
  @Operation({
    id: 'listPolicies',
    summary: 'List policies',
    description:
      "The organization's policies, newest first, a page at a time, optionally of one product " +
      '(`product_id`; an unknown one gives an empty list).',
  })
  @AllowScopes('read')
  @Answers(Messages.policy.list)
  @ApiProblems()
  list(@Query() query: ListPoliciesQueryDto): Promise<PolicyListView> {
    return this.bus.send(Messages.policy.list, query);
  }

  @Get(':id')
  @Operation({ id: 'getPolicy', summary: 'Get a policy', description: 'One policy of the organization.' })
  @AllowScopes('read')
  @Answers(Messages.policy.get)
  @ApiProblems(['not_found', 'the policy does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<PolicyView> {
    return this.bus.send(Messages.policy.get, { id });
  }

  @Patch(':id')
  @Operation({
    id: 'updatePolicy',
    summary: 'Change a policy',
    description:
      'Changes the fields the body holds; `product_id` never changes (a `400`). The change applies at ' +
      'once to its licenses on every online path: a new `max_machines` becomes the `max_seats`, and a ' +
      'new `max_uses` the `max_uses`, of every license that did not set its own; `entitlements` ' +
      'replaces the list, and every license holds the new one beside its own; the other limits are ' +
      'read from the policy. `license_type` and `duration_days` apply to licenses created from now ' +
      'on. License files already issued keep their claims until the next checkout or signing. ' +
      'Publishes `policy.updated` (and `license.updated` for each license whose `max_seats`, ' +
      '`max_uses` or `entitlements` changed).',
    example: {
      max_machines: 10,
      overage: '1.5x',
      heartbeat_grace_seconds: 900,
      entitlements: ['export.pdf'],
    },
  })
  @Answers(Messages.policy.update)
  @ApiProblems(
    ['not_found', 'the policy does not exist in the organization'],
    ['unknown_entitlement', 'a code is not an entitlement of the organization; `detail` names each one'],
  )
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdatePolicyDto): Promise<PolicyView> {
    return this.bus.send(Messages.policy.update, { id, changes });
  }

  @Delete(':id')
  @Operation({
    id: 'deletePolicy',
    summary: 'Delete a policy',
    description:
      'Deletes a policy that no license follows. A policy with licenses, even only revoked ones, ' +
      'stays (`409`). Publishes `policy.deleted`.',
  })
  @HttpCode(200)
  @Answers(Messages.policy.delete)
  @ApiProblems(
    ['not_found', 'the policy does not exist in the organization'],
    ['conflict', 'licenses follow the policy (revoked ones included)'],
  )
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.policy.delete, { id });
  }
}
