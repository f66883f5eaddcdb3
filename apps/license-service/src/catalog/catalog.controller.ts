import { CatalogProductDto, IdDto, ProductPublicKeyView, Messages } from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { CatalogService } from './catalog.service';

@BusController()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Handles(Messages.catalog.upsert)
  upsert(@BusOrg() orgId: string, @BusData() product: CatalogProductDto): Promise<{ ok: true }> {
    return this.catalog.upsert(orgId, product);
  }

  @Handles(Messages.catalog.retire)
  retire(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<{ ok: true }> {
    return this.catalog.retire(orgId, id);
  }

  @Handles(Messages.catalog.publicKey)
  publicKey(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ProductPublicKeyView> {
    return this.catalog.publicKey(orgId, id);
  }
}
