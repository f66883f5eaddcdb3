import { Module } from '@nestjs/common';
import { CatalogController } from './catalog.controller';
import { CatalogService } from './catalog.service';
import { ProductEventsConsumer } from './product-events.consumer';

@Module({
  controllers: [CatalogController],
  providers: [CatalogService, ProductEventsConsumer],
  exports: [CatalogService],
})
export class CatalogModule {}
