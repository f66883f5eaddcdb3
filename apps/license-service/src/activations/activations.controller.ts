import {
  ActivationCreatedReply,
  ActivationListView,
  ActivationView,
  CreateActivationDto,
  IdDto,
  ListActivationsQueryDto,
  MessageView,
  Messages,
  OfflineActivationDto,
  OfflineActivationReply,
  OfflineReleaseDto,
  ValidateLicenseDto,
  ValidationResultView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { ActivationsService } from './activations.service';
import { LicenseValidator } from './license-validator.service';
import { OfflineActivationsService } from './offline-activations.service';

@BusController()
export class ActivationsController {
  constructor(
    private readonly activations: ActivationsService,
    private readonly validator: LicenseValidator,
    private readonly offline: OfflineActivationsService,
  ) {}

  @Handles(Messages.activation.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateActivationDto): Promise<ActivationCreatedReply> {
    return this.activations.create(orgId, dto);
  }

  @Handles(Messages.activation.list)
  list(@BusOrg() orgId: string, @BusData() query: ListActivationsQueryDto): Promise<ActivationListView> {
    return this.activations.list(orgId, query);
  }

  @Handles(Messages.activation.heartbeat)
  heartbeat(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ActivationView> {
    return this.activations.heartbeat(orgId, id);
  }

  @Handles(Messages.activation.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.activations.delete(orgId, id);
  }

  @Handles(Messages.activation.offlineCreate)
  createOffline(
    @BusOrg() orgId: string,
    @BusData() dto: OfflineActivationDto,
  ): Promise<OfflineActivationReply> {
    return this.offline.create(orgId, dto);
  }

  @Handles(Messages.activation.offlineRelease)
  releaseOffline(@BusOrg() orgId: string, @BusData() dto: OfflineReleaseDto): Promise<MessageView> {
    return this.offline.release(orgId, dto);
  }

  @Handles(Messages.license.validate)
  validate(@BusOrg() orgId: string, @BusData() dto: ValidateLicenseDto): Promise<ValidationResultView> {
    return this.validator.validate(orgId, dto);
  }
}
