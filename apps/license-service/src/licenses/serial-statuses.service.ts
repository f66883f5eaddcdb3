import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { SerialStatus } from '@licensing/contracts';
import { LicenseEntity } from './license.entity';

/** The columns of a license its serial status is made of. */
export type SerialStatusFields = Pick<
  LicenseEntity,
  'id' | 'serial' | 'orgId' | 'productId' | 'status' | 'revokedAt' | 'validUntil' | 'maxSeats' | 'updatedAt'
>;

/**
 * The one producer of a serial status: every event, write-through, miss answer and verify fill is
 * made here, so the revocation service's cache holds one shape whoever asked for the write.
 */
export function toSerialStatus(license: SerialStatusFields): SerialStatus {
  return {
    serial: license.serial,
    org_id: license.orgId,
    license_id: license.id,
    product_id: license.productId,
    status: license.status,
    revoked_at: license.revokedAt?.toISOString() ?? null,
    valid_until: license.validUntil?.toISOString() ?? null,
    max_seats: license.maxSeats,
    version: license.updatedAt.getTime(),
  };
}

/**
 * The stored status of a batch of serials in one `serial = ANY($1)` query: what the revocation
 * service's cache falls back to on a miss, or when Redis is down. Not scoped to an organization:
 * the revocation service compares `org_id` itself and answers another organization's serial as
 * `not_found`.
 */
@Injectable()
export class SerialStatusesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async lookup(serials: string[]): Promise<SerialStatus[]> {
    const licenses = await this.dataSource.getRepository(LicenseEntity).find({
      select: {
        id: true,
        orgId: true,
        productId: true,
        serial: true,
        status: true,
        revokedAt: true,
        validUntil: true,
        maxSeats: true,
        updatedAt: true,
      },
      where: { serial: In(serials) },
    });
    return licenses.map(toSerialStatus);
  }
}
