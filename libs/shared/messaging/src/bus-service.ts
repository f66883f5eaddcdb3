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
  /** After unsubscribing on shutdown, how long in-flight messages get to finish. */
  shutdownGraceMs: number;
  logger: Logger;
  /**
   * Runs once the providers exist (the DataSource is connected) but before any lifecycle hook: the
   * place for migrations, so that background workers started by hooks find their tables.
   */
  beforeInit?: (app: INestApplication) => Promise<void>;
  /** Runs after the lifecycle hooks and before any message is taken. */
  beforeListen?: (app: INestApplication) => Promise<void>;
}

/**
 * Boots a service: its bus handlers in a NATS queue group, and a small HTTP server for health
 * probes. Shutdown (SIGTERM) unsubscribes first, lets in-flight messages finish, then closes pools.
 */
export async function startBusService(
  module: Type | DynamicModule,
  options: BusServiceOptions,
): Promise<INestApplication> {
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
        gracePeriod: options.shutdownGraceMs,
        maxReconnectAttempts: -1,
      }),
    },
    { inheritAppConfig: true },
  );
  await options.beforeInit?.(app);
  await app.init();
  await options.beforeListen?.(app);
  await app.startAllMicroservices();
  await app.listen(options.healthPort, options.host);
  return app;
}
