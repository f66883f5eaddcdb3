import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CreateRelayFileMessage,
  ListRelayFilesQueryDto,
  RelayFileCreatedView,
  RelayFileListView,
  RelayFileView,
  pageOf,
} from '@licensing/contracts';
import { InvalidKeyError, blobFromJws, parsePublicKey } from '@licensing/license-format';
import { pageWindow } from '@licensing/shared/database';
import { DomainError } from '@licensing/shared/errors';
import { auditChanges, recordAudit } from '@licensing/shared/events';
import { LicenseCheckoutService } from '../licenses/license-checkout.service';
import { RelayFileEntity } from './relay-file.entity';

/**
 * Relay files: the license file a relay leases a floating license's seats from, signed as a
 * checkout is, with the claim `relay` naming the relay (its site and public key). The row keeps
 * the public key, which verifies the relay's usage reports; the file itself is handed out once.
 */
@Injectable()
export class RelayFilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly checkouts: LicenseCheckoutService,
  ) {}

  create(orgId: string, message: CreateRelayFileMessage): Promise<RelayFileCreatedView> {
    const publicKey = relayPublicKey(message.public_key);
    const now = new Date();
    return this.dataSource.transaction(async (manager) => {
      const id = randomUUID();
      const { license, jws, claims } = await this.checkouts.relayFile(
        manager,
        orgId,
        message.license_id,
        message.ttl_seconds,
        { id, site: message.site, public_key: publicKey },
        now,
      );
      const entity = Object.assign(new RelayFileEntity(), {
        id,
        orgId,
        licenseId: license.id,
        productId: license.productId,
        site: message.site,
        publicKey,
        issuedAt: new Date(claims.iat * 1000),
        expiresAt: new Date(claims.exp! * 1000),
        createdAt: now,
      });
      await manager.insert(RelayFileEntity, entity);
      const view = toRelayFileView(entity);
      await recordAudit(manager, {
        orgId,
        action: 'created',
        resourceType: 'relay_file',
        resourceId: id,
        changes: auditChanges(null, view),
        occurredAt: now,
      });
      return { ...view, relay_file: blobFromJws(jws) };
    });
  }

  /** The organization's relay files (of one license, with `license_id`), newest first, without the file. */
  async list(orgId: string, query: ListRelayFilesQueryDto): Promise<RelayFileListView> {
    const [files, total] = await this.dataSource.getRepository(RelayFileEntity).findAndCount({
      where: { orgId, ...(query.license_id === undefined ? {} : { licenseId: query.license_id }) },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...pageWindow(pageOf(query)),
    });
    return { relay_files: files.map(toRelayFileView), total };
  }

  async get(orgId: string, id: string): Promise<RelayFileView> {
    const file = await this.dataSource.getRepository(RelayFileEntity).findOneBy({ id, orgId });
    if (!file) throw DomainError.notFound('Relay file', id);
    return toRelayFileView(file);
  }
}

/**
 * The relay's key as a PEM SPKI block in one spelling (Node's), whatever whitespace it arrived
 * with: the relay compares the file's key with its own. Anything but an Ed25519 public key is a 400.
 */
function relayPublicKey(pem: string): string {
  try {
    const key = parsePublicKey(pem);
    if (key.asymmetricKeyType === 'ed25519') return key.export({ type: 'spki', format: 'pem' }).toString();
  } catch (error) {
    if (!(error instanceof InvalidKeyError)) throw error;
  }
  throw DomainError.validation([
    { field: 'public_key', message: 'public_key must be an Ed25519 public key, a PEM SPKI block' },
  ]);
}

export function toRelayFileView(file: RelayFileEntity): RelayFileView {
  return {
    id: file.id,
    license_id: file.licenseId,
    product_id: file.productId,
    site: file.site,
    public_key: file.publicKey,
    issued_at: file.issuedAt.toISOString(),
    expires_at: file.expiresAt.toISOString(),
    created_at: file.createdAt.toISOString(),
  };
}
