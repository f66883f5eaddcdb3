import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { BusClient } from '@licensing/shared/messaging';

/**
 * Kubernetes probes: alive while the process runs, ready while NATS is connected. Redis is not
 * consulted: without it the service still answers correctly, from the license service.
 */
@Controller()
export class HealthController {
  constructor(private readonly bus: BusClient) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  ready(): { status: 'ok' } {
    if (this.bus.connection().isClosed()) throw new ServiceUnavailableException('NATS connection closed');
    return { status: 'ok' };
  }
}
