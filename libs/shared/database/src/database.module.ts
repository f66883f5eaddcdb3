import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ServiceDatabaseOptions, serviceDataSourceOptions } from './data-source';
import { HealthController } from './health.controller';

/** The service's own PostgreSQL schema through TypeORM, plus its health probes. */
@Module({})
export class DatabaseModule {
  static forRoot(options: ServiceDatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot(serviceDataSourceOptions(options))],
      controllers: [HealthController],
    };
  }
}
