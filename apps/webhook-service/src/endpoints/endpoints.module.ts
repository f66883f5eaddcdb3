import { Module } from '@nestjs/common';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { EndpointDisableSweeper } from './endpoint-disable.sweeper';
import { EndpointsController } from './endpoints.controller';
import { EndpointResealJob } from './endpoint-reseal.job';
import { EndpointsService } from './endpoints.service';

@Module({
  imports: [DeliveriesModule],
  controllers: [EndpointsController],
  providers: [EndpointsService, EndpointDisableSweeper, EndpointResealJob],
})
export class EndpointsModule {}
