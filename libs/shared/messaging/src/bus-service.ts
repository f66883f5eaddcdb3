import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger, NestPinoLogger } from '@licensing/shared/logging';
import { NamespacedNatsServer } from './nats-server';

export interface BusServiceOptions {
  /** Queue group: every replica of a service shares one, so each request reaches exactly one replica. */
  queue: string;
  natsUrl: string;
  namespace: string;
  host: string;
  healthPort: number;
  logger: Logger;
  /** Runs after the module graph is up and before any message is taken (migrations, cache warm-up). */
  beforeListen?: (app: INestApplication) => Promise<void>;
}

/**
 * Boots a service: its bus handlers in a NATS queue group, and a small HTTP server for health
 * probes. Shutdown (SIGTERM) unsubscribes first, lets in-flight messages finish, then closes pools.
 */
export async function startBusService(module: Type | DynamicModule, options: BusServiceOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
    logger: new NestPinoLogger(options.logger),
    abortOnError: false,
  });
  app.enableShutdownHooks();
  app.connectMicroservice(
    {
      strategy: new NamespacedNatsServer(options.namespace, {
        servers: options.natsUrl.split(','),
        queue: options.queue,
        name: options.queue,
        gracefulShutdown: true,
        gracePeriod: 2000,
        maxReconnectAttempts: -1,
      }),
    },
    { inheritAppConfig: true },
  );
  await app.init();
  await options.beforeListen?.(app);
  await app.startAllMicroservices();
  await app.listen(options.healthPort, options.host);
  return app;
}
