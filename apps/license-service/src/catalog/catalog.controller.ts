import { MessagePattern } from '@nestjs/microservices';
import { CatalogProductDto, IdDto, ProductPublicKeyView, Subjects } from '@licensing/contracts';
import { BusController, BusData, BusOrg } from '@licensing/shared/messaging';
import { CatalogService } from './catalog.service';

@BusController()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @MessagePattern(Subjects.catalog.upsert)
  upsert(@BusOrg() orgId: string, @BusData() product: CatalogProductDto): Promise<{ ok: true }> {
    return this.catalog.upsert(orgId, product);
  }

  @MessagePattern(Subjects.catalog.retire)
  retire(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<{ ok: true }> {
    return this.catalog.retire(orgId, id);
  }

  @MessagePattern(Subjects.catalog.publicKey)
  publicKey(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ProductPublicKeyView> {
    return this.catalog.publicKey(orgId, id);
  }
}
