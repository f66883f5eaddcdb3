import {
  CreateKeyPairDto,
  IdDto,
  KeyPairListView,
  KeyPairView,
  MessageView,
  PageQueryDto,
  Messages,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { KeyPairsService } from './key-pairs.service';

@BusController()
export class KeyPairsController {
  constructor(private readonly keyPairs: KeyPairsService) {}

  @Handles(Messages.keyPair.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateKeyPairDto): Promise<KeyPairView> {
    return this.keyPairs.create(orgId, dto);
  }

  @Handles(Messages.keyPair.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<KeyPairListView> {
    return this.keyPairs.list(orgId, query);
  }

  @Handles(Messages.keyPair.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<KeyPairView> {
    return this.keyPairs.get(orgId, id);
  }

  @Handles(Messages.keyPair.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.keyPairs.delete(orgId, id);
  }
}
