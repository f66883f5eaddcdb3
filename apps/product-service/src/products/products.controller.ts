import { MessagePattern } from '@nestjs/microservices';
import {
  CreateProductDto,
  IdDto,
  MessageView,
  PageQueryDto,
  ProductListView,
  ProductView,
  Subjects,
  UpdateProductMessage,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg } from '@licensing/shared/messaging';
import { ProductsService } from './products.service';

@BusController()
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @MessagePattern(Subjects.product.create)
  create(@BusOrg() orgId: string, @BusData() dto: CreateProductDto): Promise<ProductView> {
    return this.products.create(orgId, dto);
  }

  @MessagePattern(Subjects.product.list)
  list(@BusOrg() orgId: string, @BusData() query: PageQueryDto): Promise<ProductListView> {
    return this.products.list(orgId, query);
  }

  @MessagePattern(Subjects.product.get)
  get(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<ProductView> {
    return this.products.get(orgId, id);
  }

  @MessagePattern(Subjects.product.update)
  update(@BusOrg() orgId: string, @BusData() { id, changes }: UpdateProductMessage): Promise<ProductView> {
    return this.products.update(orgId, id, changes);
  }

  @MessagePattern(Subjects.product.delete)
  delete(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<MessageView> {
    return this.products.delete(orgId, id);
  }
}
