import {
  CreateProductDto,
  IdDto,
  MessageView,
  PageQueryDto,
  ProductListView,
  ProductView,
  Messages,
  UpdateProductMessage,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { ProductsService } from './products.service';

@BusController()
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Handles(Messages.product.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateProductDto): Promise<ProductView> {
    return this.products.create(orgId, dto);
  }

  @Handles(Messages.product.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<ProductListView> {
    return this.products.list(orgId, query);
  }

  @Handles(Messages.product.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ProductView> {
    return this.products.get(orgId, id);
  }

  @Handles(Messages.product.update)
  update(@BusOrg() orgId: string, @BusData() { id, changes }: UpdateProductMessage): Promise<ProductView> {
    return this.products.update(orgId, id, changes);
  }

  @Handles(Messages.product.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.products.delete(orgId, id);
  }
}
