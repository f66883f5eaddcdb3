import { Messages, RevocationListReply, RevocationListRequest } from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { RevocationListsService } from './revocation-lists.service';

@BusController()
export class RevocationListsController {
  constructor(private readonly lists: RevocationListsService) {}

  @Handles(Messages.license.revocationList)
  get(@BusOrg() orgId: string, @BusData() request: RevocationListRequest): Promise<RevocationListReply> {
    return this.lists.get(orgId, request);
  }
}
