import { MessagePattern } from '@nestjs/microservices';
import {
  CreateKeyPairDto,
  IdDto,
  KeyPairListView,
  KeyPairView,
  MessageView,
  PageQueryDto,
  Subjects,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg } from '@licensing/shared/messaging';
import { KeyPairsService } from './key-pairs.service';

@BusController()
export class KeyPairsController {
  constructor(private readonly keyPairs: KeyPairsService) {}

  @MessagePattern(Subjects.keyPair.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateKeyPairDto): Promise<KeyPairView> {
    return this.keyPairs.create(orgId, dto);
  }

  @MessagePattern(Subjects.keyPair.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<KeyPairListView> {
    return this.keyPairs.list(orgId, query);
  }

  @MessagePattern(Subjects.keyPair.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<KeyPairView> {
    return this.keyPairs.get(orgId, id);
  }

  @MessagePattern(Subjects.keyPair.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.keyPairs.delete(orgId, id);
  }
}
