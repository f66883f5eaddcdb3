import {
  ActivationCreatedReply,
  ActivationListView,
  ActivationView,
  CheckoutMessage,
  CheckoutView,
  CreateActivationDto,
  DEFAULT_CHECKOUT_TTL_SECONDS,
  IdDto,
  ListActivationsQueryDto,
  MessageView,
  Messages,
  OfflineActivationDto,
  OfflineActivationMessage,
  OfflineActivationReply,
  OfflineReleaseDto,
  CreateProcessMessage,
  ListProcessesMessage,
  ProcessCreatedReply,
  ProcessListView,
  ProcessRefDto,
  ProcessView,
  ValidateLicenseDto,
  ValidationResultView,
} from '@licensing/contracts';
import { CredentialReach } from '@licensing/shared/logging';
import { BusController, BusData, BusOrg, BusReach, Handles } from '@licensing/shared/messaging';
import { ActivationsService } from './activations.service';
import { LicenseValidator } from './license-validator.service';
import { OfflineActivationsService } from './offline-activations.service';
import { ProcessesService } from './processes.service';

@BusController()
export class ActivationsController {
  constructor(
    private readonly activations: ActivationsService,
    private readonly validator: LicenseValidator,
    private readonly offline: OfflineActivationsService,
    private readonly processes: ProcessesService,
  ) {}

  @Handles(Messages.process.create)
  createProcess(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() message: CreateProcessMessage,
  ): Promise<ProcessCreatedReply> {
    return this.processes.create(orgId, message, reach);
  }

  @Handles(Messages.process.list)
  listProcesses(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() query: ListProcessesMessage,
  ): Promise<ProcessListView> {
    return this.processes.list(orgId, query, reach);
  }

  @Handles(Messages.process.heartbeat)
  heartbeatProcess(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() ref: ProcessRefDto,
  ): Promise<ProcessView> {
    return this.processes.heartbeat(orgId, ref, reach);
  }

  @Handles(Messages.process.delete)
  deleteProcess(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() ref: ProcessRefDto,
  ): Promise<MessageView> {
    return this.processes.delete(orgId, ref, reach);
  }

  @Handles(Messages.activation.create)
  create(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() dto: CreateActivationDto,
  ): Promise<ActivationCreatedReply> {
    return this.activations.create(orgId, dto, reach);
  }

  @Handles(Messages.activation.list)
  list(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() query: ListActivationsQueryDto,
  ): Promise<ActivationListView> {
    return this.activations.list(orgId, query, reach);
  }

  @Handles(Messages.activation.heartbeat)
  heartbeat(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() { id }: IdDto,
  ): Promise<ActivationView> {
    return this.activations.heartbeat(orgId, id, reach);
  }

  @Handles(Messages.activation.checkout)
  checkout(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() message: CheckoutMessage,
  ): Promise<CheckoutView> {
    return this.activations.checkout(orgId, message, reach);
  }

  @Handles(Messages.activation.delete)
  delete(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() { id }: IdDto,
  ): Promise<MessageView> {
    return this.activations.delete(orgId, id, reach);
  }

  @Handles(Messages.activation.offlineCreate)
  createOffline(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() message: OfflineActivationMessage,
  ): Promise<OfflineActivationReply> {
    return this.offline.create(orgId, message, reach);
  }

  /** From a gateway of the previous release, which does not send the organization's checkout TTL. */
  @Handles(Messages.activation.offlineCreateV1)
  createOfflineV1(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() dto: OfflineActivationDto,
  ): Promise<OfflineActivationReply> {
    return this.offline.create(orgId, { ...dto, ttl_seconds: DEFAULT_CHECKOUT_TTL_SECONDS }, reach);
  }

  @Handles(Messages.activation.offlineRelease)
  releaseOffline(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() dto: OfflineReleaseDto,
  ): Promise<MessageView> {
    return this.offline.release(orgId, dto, reach);
  }

  @Handles(Messages.license.validate)
  validate(
    @BusOrg() orgId: string,
    @BusReach() reach: CredentialReach,
    @BusData() dto: ValidateLicenseDto,
  ): Promise<ValidationResultView> {
    return this.validator.validate(orgId, dto, reach);
  }
}
