import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { DEFAULT_CHECKOUT_TTL_SECONDS } from '@licensing/contracts';
import { isUniqueViolation } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { CreatedApiKeyView } from './api-key.dto';
import { issueApiKey } from './api-key-issuer';
import { ApiKeyScope } from '../http/auth-context';
import { OrganizationEntity } from './organization.entity';

export interface CreatedOrganization {
  id: string;
  name: string;
  adminKey: CreatedApiKeyView;
}

/** Organizations are created by operators (the CLI, or the development bootstrap), never over the API. */
@Injectable()
export class OrganizationsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(name: string): Promise<CreatedOrganization> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const organization = Object.assign(new OrganizationEntity(), {
          id: randomUUID(),
          name,
          createdAt: new Date(),
          clientKeysLicenseActions: true,
          checkoutTtlSeconds: DEFAULT_CHECKOUT_TTL_SECONDS,
        });
        await manager.insert(OrganizationEntity, organization);
        const adminKey = await issueApiKey(manager, organization.id, 'admin (bootstrap)', ['admin']);
        return { id: organization.id, name, adminKey };
      });
    } catch (error) {
      if (isUniqueViolation(error, 'uq_organizations_name')) {
        throw DomainError.conflict(`An organization named "${name}" already exists`);
      }
      throw error;
    }
  }

  /**
   * A new API key for an existing organization, named by id or by name: how an operator gets a key
   * again (the first one is shown only once). Made by an operator, not an API key: no audit entry.
   */
  async issueKey(
    idOrName: string,
    name: string,
    scopes: ApiKeyScope[],
  ): Promise<{ organization: { id: string; name: string }; key: CreatedApiKeyView }> {
    return this.dataSource.transaction(async (manager) => {
      const organization = await manager
        .getRepository(OrganizationEntity)
        .findOneBy(isUUID(idOrName, 'all') ? { id: idOrName } : { name: idOrName });
      if (!organization) throw DomainError.notFound('Organization', idOrName);
      const key = await issueApiKey(manager, organization.id, name, scopes);
      return { organization: { id: organization.id, name: organization.name }, key };
    });
  }

  /** Creates the named organization unless it exists; answers undefined when it already did. */
  async createIfMissing(name: string): Promise<CreatedOrganization | undefined> {
    if (await this.dataSource.getRepository(OrganizationEntity).existsBy({ name })) return undefined;
    try {
      return await this.create(name);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'conflict') return undefined; // another replica won
      throw error;
    }
  }
}
