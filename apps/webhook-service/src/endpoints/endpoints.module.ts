import { Module } from '@nestjs/common';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { EndpointDisableSweeper } from './endpoint-disable.sweeper';
import { EndpointsController } from './endpoints.controller';
import { EndpointsService } from './endpoints.service';

@Module({
  imports: [DeliveriesModule],
  controllers: [EndpointsController],
  providers: [EndpointsService, EndpointDisableSweeper],
})
export class EndpointsModule {}
