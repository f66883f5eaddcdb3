import {
  CreateLicenseTokenMessage,
  CreatedLicenseTokenView,
  IdDto,
  LicenseTokenListView,
  ListLicenseTokensMessage,
  MessageView,
  Messages,
  ResolveCredentialDto,
  ResolveCredentialReply,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { CredentialsService } from './credentials.service';

@BusController()
export class CredentialsController {
  constructor(private readonly credentials: CredentialsService) {}

  @Handles(Messages.credential.createLicenseToken)
  createLicenseToken(
    @BusOrg() orgId: string,
    @BusData() message: CreateLicenseTokenMessage,
  ): Promise<CreatedLicenseTokenView> {
    return this.credentials.createLicenseToken(orgId, message);
  }

  @Handles(Messages.credential.listLicenseTokens)
  listLicenseTokens(
    @BusOrg() orgId: string,
    @BusData() message: ListLicenseTokensMessage,
  ): Promise<LicenseTokenListView> {
    return this.credentials.listLicenseTokens(orgId, message);
  }

  @Handles(Messages.credential.revokeLicenseToken)
  revokeLicenseToken(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.credentials.revokeLicenseToken(orgId, id);
  }

  /** Asked by a gateway that has not cached the token: no organization is known yet. */
  @Handles(Messages.credential.resolve)
  async resolve(@BusData() request: ResolveCredentialDto): Promise<ResolveCredentialReply> {
    return { credential: await this.credentials.resolve(request) };
  }
}
