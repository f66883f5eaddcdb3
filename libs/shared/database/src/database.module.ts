import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ServiceDatabaseOptions, serviceDataSourceOptions } from './data-source';

/** The service's own PostgreSQL schema through TypeORM (its readiness is checked by the shared health probes). */
@Module({})
export class DatabaseModule {
  static forRoot(options: ServiceDatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot(serviceDataSourceOptions(options))],
    };
  }
}
