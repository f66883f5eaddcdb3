import { Module } from '@nestjs/common';
import { ProductDeletions } from './product-deletions';
import { ProductsController } from './products.controller';
import { ProductsService } from './products.service';

@Module({
  controllers: [ProductsController],
  providers: [ProductsService, ProductDeletions],
})
export class ProductsModule {}
