import { INestApplication } from '@nestjs/common';
import { startGateway } from '../../../gateway/src/app';
import { loadGatewayConfig } from '../../../gateway/src/config';
import { OrganizationsService } from '../../../gateway/src/identity/organizations.service';
import { startLicenseService } from '../../../license-service/src/app';
import { loadLicenseServiceConfig } from '../../../license-service/src/config';
import { startProductService } from '../../../product-service/src/app';
import { loadProductServiceConfig } from '../../../product-service/src/config';
import { ApiClient, testEnv, uniqueNamespace } from '@licensing/shared/testing';

export interface TestOrganization {
  id: string;
  adminKey: string;
  /** Authenticated with the organization's admin key. */
  api: ApiClient;
}

export interface TestStack {
  baseUrl: string;
  namespace: string;
  /** Unauthenticated. */
  anonymous: ApiClient;
  newOrganization(): Promise<TestOrganization>;
  close(): Promise<void>;
}

/**
 * The whole platform in this process, as `npm start` runs it, on its own bus namespace and a
 * random port: a test speaks HTTP to the gateway exactly as a client would.
 */
export async function startStack(): Promise<TestStack> {
  const namespace = uniqueNamespace();
  const env = testEnv(namespace);
  const services: INestApplication[] = [];
  // Every service of the platform, as tools/services.js lists them for `npm start`.
  const starters: Array<() => Promise<INestApplication>> = [
    () => startProductService(loadProductServiceConfig(env)),
    () => startLicenseService(loadLicenseServiceConfig(env)),
  ];
  for (const start of starters) services.push(await start());
  const gateway = await startGateway(loadGatewayConfig(env));
  const address = gateway.getHttpServer().address();
  if (typeof address !== 'object' || address === null) throw new Error('gateway is not listening');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const organizations = gateway.get(OrganizationsService);

  return {
    baseUrl,
    namespace,
    anonymous: new ApiClient(baseUrl),
    async newOrganization() {
      const created = await organizations.create(`test-${uniqueNamespace('org')}`);
      return { id: created.id, adminKey: created.adminKey.key, api: new ApiClient(baseUrl, created.adminKey.key) };
    },
    async close() {
      await gateway.close();
      for (const service of services.reverse()) await service.close();
    },
  };
}
