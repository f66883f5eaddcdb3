import { INestApplication } from '@nestjs/common';
import { loadAnalyticsServiceConfig, startAnalyticsService } from '@licensing/app/analytics-service';
import { OrganizationsService, loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { loadLicenseServiceConfig, startLicenseService } from '@licensing/app/license-service';
import { loadProductServiceConfig, startProductService } from '@licensing/app/product-service';
import { loadRevocationServiceConfig, startRevocationService } from '@licensing/app/revocation-service';
import { loadWebhookServiceConfig, startWebhookService } from '@licensing/app/webhook-service';
import { Redis } from 'ioredis';
import { serialCacheKey } from '@licensing/shared/serial-cache';
import {
  ApiClient,
  TEST_REDIS_URL,
  deleteNamespaceStreams,
  testEnv,
  uniqueNamespace,
} from '@licensing/shared/testing';
import { createTestDatabase } from './test-database';

export interface TestOrganization {
  id: string;
  adminKey: string;
  /** Authenticated with the organization's admin key. */
  api: ApiClient;
}

interface StackOptions {
  /** Merged over the test environment of every service (REDIS_URL of a test's own redis-server, say). */
  env?: Record<string, string>;
}

export interface TestStack {
  baseUrl: string;
  namespace: string;
  /** The environment every service was configured from (for a service a test runs as a process of its own). */
  env: Record<string, string>;
  /** The gateway's Nest application, for tests that read its router (the route matrices). */
  gateway: INestApplication;
  /** Unauthenticated. */
  anonymous: ApiClient;
  newOrganization(): Promise<TestOrganization>;
  /** The running service of that name (its health port is its HTTP server's). */
  service(name: string): INestApplication;
  /** Stops one service, as a crash or a deploy would (`'analytics-service'`, say); the rest keep running. */
  stopService(name: string): Promise<void>;
  /** Starts a stopped service again, with the same settings. */
  startService(name: string): Promise<void>;
  /**
   * One more replica of a service, as a scale-out would start it (closed with the stack, or by the
   * caller, as a deploy or a SIGTERM would).
   */
  startReplica(name: string): Promise<INestApplication>;
  /**
   * Drops serials' entries from the serial-status cache. The services keep the cache current for
   * every change they make; a test that changes a license row behind their back (to fake the
   * passing of time, say) calls this, as an operator would after a manual fix.
   */
  forgetCachedSerials(orgId: string, ...serials: string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The whole platform in this process, as `npm start` runs it, on its own bus namespace and a
 * random port: a test speaks HTTP to the gateway exactly as a client would.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const namespace = uniqueNamespace();
  const env = testEnv(namespace, options.env);
  if (!options.env?.DATABASE_URL) await createTestDatabase();
  // Every service of the platform, as tools/services.js lists them for `npm start`, by the same names.
  const starters: Record<string, () => Promise<INestApplication>> = {
    'product-service': () => startProductService(loadProductServiceConfig(env)),
    'license-service': () => startLicenseService(loadLicenseServiceConfig(env)),
    'revocation-service': () => startRevocationService(loadRevocationServiceConfig(env)),
    'analytics-service': () => startAnalyticsService(loadAnalyticsServiceConfig(env)),
    'webhook-service': () => startWebhookService(loadWebhookServiceConfig(env)),
  };
  /** The services running now, in start order. */
  const services = new Map<string, INestApplication>();
  const replicas: INestApplication[] = [];
  for (const [name, start] of Object.entries(starters)) services.set(name, await start());
  const gateway = await startGateway(loadGatewayConfig(env));
  const address = gateway.getHttpServer().address();
  if (typeof address !== 'object' || address === null) throw new Error('gateway is not listening');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const organizations = gateway.get(OrganizationsService);
  let redis: Redis | undefined;

  return {
    baseUrl,
    namespace,
    env,
    gateway,
    anonymous: new ApiClient(baseUrl),
    async newOrganization() {
      const created = await organizations.create(`test-${uniqueNamespace('org')}`);
      return {
        id: created.id,
        adminKey: created.adminKey.key,
        api: new ApiClient(baseUrl, created.adminKey.key),
      };
    },
    service(name) {
      const service = services.get(name);
      if (!service) throw new Error(`${name} is not running`);
      return service;
    },
    async stopService(name) {
      const service = services.get(name);
      if (!service) throw new Error(`${name} is not running`);
      services.delete(name);
      await service.close();
    },
    async startService(name) {
      const start = starters[name];
      if (!start) throw new Error(`No service named ${name}`);
      if (services.has(name)) throw new Error(`${name} is already running`);
      services.set(name, await start());
    },
    async startReplica(name) {
      const start = starters[name];
      if (!start) throw new Error(`No service named ${name}`);
      const replica = await start();
      replicas.push(replica);
      return replica;
    },
    async forgetCachedSerials(orgId, ...serials) {
      redis ??= new Redis(TEST_REDIS_URL);
      const keys = await Promise.all(
        serials.map((serial) => serialCacheKey(redis!, namespace, orgId, serial)),
      );
      if (keys.length > 0) await redis.del(...keys);
    },
    async close() {
      await redis?.quit();
      await gateway.close();
      // Closing twice (a test stopped its replica already) is harmless.
      for (const replica of replicas) await replica.close().catch(() => undefined);
      for (const service of [...services.values()].reverse()) await service.close();
      await deleteNamespaceStreams(namespace);
    },
  };
}
