import {
  BeforeApplicationShutdown,
  Controller,
  Get,
  OnModuleDestroy,
  Optional,
  ServiceUnavailableException,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Metrics } from '@licensing/shared/metrics';
import { BusClient } from './bus-client';
import { DependencyState, Readiness } from './readiness';

export interface HealthAnswer {
  status: 'ok';
  checks?: Record<string, DependencyState>;
}

/**
 * The Kubernetes probes of every process. Alive (`/health/live`) while the process runs. Ready
 * (`/health/ready`) while it can answer correctly: its NATS connection is up, its PostgreSQL (when
 * it has one) answers, its Redis (gateway, revocation service) has been reached (see `Readiness`
 * for why a Redis lost later is reported, not fatal); and not once it has begun to shut down, so
 * that traffic moves to the other replicas before it drains. `/healthz` and `/readyz` are the
 * same probes under their older names.
 */
@Controller()
export class HealthController implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly unmeasure: () => void;

  constructor(
    private readonly readiness: Readiness,
    bus: BusClient,
    @Optional() @InjectDataSource() dataSource?: DataSource,
  ) {
    readiness.add({ name: 'nats', kind: 'required', isUp: () => bus.isAvailable });
    if (dataSource) {
      readiness.add({
        name: 'database',
        kind: 'required',
        isUp: async () => {
          await dataSource.query('SELECT 1');
          return true;
        },
      });
    }
    this.unmeasure = Metrics.dependencyUp.addSource(async (sample) => {
      const { checks } = await readiness.report();
      for (const [dependency, state] of Object.entries(checks))
        sample({ dependency }, state === 'up' ? 1 : 0);
    });
  }

  /** The first step of a shutdown (SIGTERM), before subscriptions drain and pools close. */
  onModuleDestroy(): void {
    this.unmeasure();
    this.readiness.stop();
  }

  /**
   * Nest closes the HTTP server and drains NATS right after this hook: waiting here keeps the
   * process serving, and its probe answering 503, for READINESS_DRAIN_MS first.
   */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    await this.readiness.drained(signal);
  }

  @Get(['health/live', 'healthz'])
  live(): HealthAnswer {
    return { status: 'ok' };
  }

  @Get(['health/ready', 'readyz'])
  async ready(): Promise<HealthAnswer> {
    const report = await this.readiness.report();
    if (!report.ready) throw new ServiceUnavailableException(report.reason);
    return { status: 'ok', checks: report.checks };
  }
}
