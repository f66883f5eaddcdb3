import { MessagePattern } from '@nestjs/microservices';
import {
  ActivationListView,
  ActivationView,
  CreateActivationDto,
  IdDto,
  ListActivationsQueryDto,
  MessageView,
  Subjects,
  ValidateLicenseDto,
  ValidationResultView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg } from '@licensing/shared/messaging';
import { ActivationResult, ActivationsService } from './activations.service';
import { LicenseValidator } from './license-validator.service';

@BusController()
export class ActivationsController {
  constructor(
    private readonly activations: ActivationsService,
    private readonly validator: LicenseValidator,
  ) {}

  @MessagePattern(Subjects.activation.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateActivationDto): Promise<ActivationResult> {
    return this.activations.create(orgId, dto);
  }

  @MessagePattern(Subjects.activation.list)
  list(@BusOrg() orgId: string, @BusData() query: ListActivationsQueryDto): Promise<ActivationListView> {
    return this.activations.list(orgId, query);
  }

  @MessagePattern(Subjects.activation.heartbeat)
  heartbeat(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ActivationView> {
    return this.activations.heartbeat(orgId, id);
  }

  @MessagePattern(Subjects.activation.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.activations.delete(orgId, id);
  }

  @MessagePattern(Subjects.license.validate)
  validate(@BusOrg() orgId: string, @BusData() dto: ValidateLicenseDto): Promise<ValidationResultView> {
    return this.validator.validate(orgId, dto);
  }
}
