import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { RevocationListsController } from './revocation-lists.controller';
import { RevocationListsService } from './revocation-lists.service';

/** Signed revocation lists per product, versioned by the counter every status change bumps. */
@Module({
  imports: [CatalogModule],
  controllers: [RevocationListsController],
  providers: [RevocationListsService],
})
export class RevocationListsModule {}
