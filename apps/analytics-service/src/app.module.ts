import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@licensing/shared/database';
import { BusModule } from '@licensing/shared/messaging';
import { AnalyticsModule } from './analytics/analytics.module';
import { ANALYTICS_CONFIG, AnalyticsServiceConfig } from './config';
import { ANALYTICS_MIGRATIONS } from './migrations';
import { ROLLUP_ENTITIES } from './reports/rollup.entity';
import { ReportIdMonthEntity, SyncReportEntity, SyncReportIdEntity } from './reports/sync-report.entity';
import { MeteredUseEntity } from './usage/metered-use.entity';
import { UsageModule } from './usage/usage.module';
import { PartitionsModule } from './partitions/partitions.module';
import { ReportsModule } from './reports/reports.module';

export const ANALYTICS_SCHEMA = 'analytics';
export const ANALYTICS_ENTITIES = [
  SyncReportEntity,
  SyncReportIdEntity,
  ReportIdMonthEntity,
  ...ROLLUP_ENTITIES,
  MeteredUseEntity,
];

@Module({})
export class AnalyticsServiceModule {
  static forRoot(config: AnalyticsServiceConfig): DynamicModule {
    return {
      module: AnalyticsServiceModule,
      global: true,
      imports: [
        DatabaseModule.forRoot({
          url: config.DATABASE_URL,
          schema: ANALYTICS_SCHEMA,
          entities: ANALYTICS_ENTITIES,
          migrations: ANALYTICS_MIGRATIONS,
          poolSize: config.DATABASE_POOL_SIZE,
          // No connect or query timeout: its hourly upkeep (VACUUM, partitions dropped, expired rows
          // deleted) may run for minutes.
        }),
        BusModule.forRoot({
          natsUrl: config.NATS_URL,
          clusterSize: config.NATS_CLUSTER_SIZE,
          namespace: config.BUS_NAMESPACE,
          timeoutMs: config.BUS_TIMEOUT_MS,
          streamReplicas: config.JETSTREAM_REPLICAS,
          name: 'analytics-service',
        }),
        PartitionsModule,
        ReportsModule,
        UsageModule,
        AnalyticsModule,
      ],
      providers: [{ provide: ANALYTICS_CONFIG, useValue: config }],
      exports: [ANALYTICS_CONFIG],
    };
  }
}
