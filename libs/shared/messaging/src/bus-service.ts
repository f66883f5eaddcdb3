import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { LevelWithSilent, Logger, NestPinoLogger, createLogger } from '@licensing/shared/logging';
import { serveMetrics } from '@licensing/shared/metrics';
import { NATS_LIVENESS } from './bus-client';
import { directHandlers } from './direct-dispatch';
import { NamespacedNatsServer } from './nats-server';
import { Readiness } from './readiness';

/** The settings every bus service reads from its environment (commonEnv, HOST, HEALTH_PORT). */
export interface BusServiceConfig {
  NATS_URL: string;
  BUS_NAMESPACE: string;
  HOST: string;
  HEALTH_PORT: number;
  /** On shutdown, how long the process stays up unready before it drains. */
  READINESS_DRAIN_MS?: number;
  /** After unsubscribing on shutdown, how long in-flight messages get to finish. */
  SHUTDOWN_GRACE_MS: number;
  LOG_LEVEL: LevelWithSilent;
}

export interface BusServiceOptions {
  /** The service's name: its NATS queue group (each request reaches one replica) and its log `service`. */
  name: string;
  config: BusServiceConfig;
  /** Where logs go; by default JSON lines on stdout at LOG_LEVEL. */
  logger?: Logger;
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
  const { name, config } = options;
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
    logger: new NestPinoLogger(options.logger ?? createLogger(name, config.LOG_LEVEL)),
    abortOnError: false,
  });
  app.enableShutdownHooks();
  readinessOf(app)?.setDrainDelay(config.READINESS_DRAIN_MS ?? 0);
  const server = new NamespacedNatsServer(config.BUS_NAMESPACE, {
    servers: config.NATS_URL.split(','),
    queue: name,
    name,
    gracefulShutdown: true,
    gracePeriod: config.SHUTDOWN_GRACE_MS,
    maxReconnectAttempts: -1,
    // A replica whose server is cut off moves to another one, where the cluster can reach it.
    ...NATS_LIVENESS,
  });
  app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
  try {
    server.useDirectHandlers(directHandlers(app));
  } catch (error) {
    await app.close();
    throw error;
  }
  serveMetrics(app.getHttpAdapter().getInstance());
  try {
    await options.beforeInit?.(app);
    await app.init();
    await options.beforeListen?.(app);
    await app.startAllMicroservices();
    await app.listen(config.HEALTH_PORT, config.HOST);
  } catch (error) {
    // Its connections and timers end with it: a caller that goes on (a test) keeps nothing open.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/** The app's Readiness, when its module imports BusModule (a bare test module may not). */
function readinessOf(app: INestApplication): Readiness | undefined {
  try {
    return app.get(Readiness);
  } catch {
    return undefined;
  }
}
