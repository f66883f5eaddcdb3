import { Module } from '@nestjs/common';
import { PartitionMaintenanceJob, PartitionsService } from './partitions.service';

@Module({
  providers: [PartitionsService, PartitionMaintenanceJob],
  exports: [PartitionsService, PartitionMaintenanceJob],
})
export class PartitionsModule {}
