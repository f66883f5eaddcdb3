import { Controller, Get, OnModuleDestroy, Optional, ServiceUnavailableException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BusClient } from './bus-client';

/**
 * The Kubernetes probes of every process, with one readiness rule: alive while the process runs;
 * ready while it can answer correctly — its NATS connection is up, and so is its PostgreSQL when it
 * has one — and not once it has begun to shut down, so that traffic moves to the other replicas
 * before it drains. Redis is never a condition: the revocation cache falls back to PostgreSQL and
 * the rate limiter fails open.
 */
@Controller()
export class HealthController implements OnModuleDestroy {
  private stopping = false;

  constructor(
    private readonly bus: BusClient,
    @Optional() @InjectDataSource() private readonly dataSource?: DataSource,
  ) {}

  /** The first step of a shutdown (SIGTERM), before subscriptions drain and pools close. */
  onModuleDestroy(): void {
    this.stopping = true;
  }

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(): Promise<{ status: 'ok' }> {
    if (this.stopping) throw new ServiceUnavailableException('shutting down');
    if (!this.bus.isConnected) throw new ServiceUnavailableException('NATS unavailable');
    if (this.dataSource) {
      try {
        await this.dataSource.query('SELECT 1');
      } catch {
        throw new ServiceUnavailableException('database unavailable');
      }
    }
    return { status: 'ok' };
  }
}
