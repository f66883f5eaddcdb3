import {
  CreatePolicyDto,
  IdDto,
  ListPoliciesQueryDto,
  MessageView,
  Messages,
  PolicyListView,
  PolicyView,
  UpdatePolicyMessage,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { PoliciesService } from './policies.service';

@BusController()
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Handles(Messages.policy.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreatePolicyDto): Promise<PolicyView> {
    return this.policies.create(orgId, dto);
  }

  @Handles(Messages.policy.list)
  list(@BusOrg() orgId: string, @BusData() query: ListPoliciesQueryDto): Promise<PolicyListView> {
    return this.policies.list(orgId, query);
  }

  @Handles(Messages.policy.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<PolicyView> {
    return this.policies.get(orgId, id);
  }

  @Handles(Messages.policy.update)
  update(@BusOrg() orgId: string, @BusData() { id, changes }: UpdatePolicyMessage): Promise<PolicyView> {
    return this.policies.update(orgId, id, changes);
  }

  @Handles(Messages.policy.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.policies.delete(orgId, id);
  }
}
