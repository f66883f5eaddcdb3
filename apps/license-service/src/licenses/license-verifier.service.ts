import { KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { Messages, VerifyErrorCode, VerifyLicenseDto, VerifyResultView } from '@licensing/contracts';
import {
  DecodedJws,
  InvalidKeyError,
  LicenseClaims,
  UnsupportedKeyError,
  MalformedJwsError,
  decodeJws,
  jwsFromBlob,
  keyAlgorithmOf,
  parsePublicKey,
  readLicenseClaims,
  timeProblems,
  verifyJwsSignature,
} from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { preparedStatement } from '@licensing/shared/database';
import { BusClient } from '@licensing/shared/messaging';
import { CacheLookup, SerialStatusReader } from '@licensing/shared/serial-cache';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { SigningKeysService } from '../signing/signing-keys.service';
import { LicenseEntity } from './license.entity';
import { SerialStatusFields, toSerialStatus } from './serial-statuses.service';
import { LicenseStatus, effectiveStatus } from '@licensing/contracts';

const MESSAGES: Record<VerifyErrorCode, string> = {
  malformed: 'The license is not a signed license file',
  unknown_key: 'The license was signed by a key pair this organization does not have',
  signature_invalid: 'The signature does not verify with the key',
  product_mismatch: 'The license belongs to another product',
  not_yet_valid: 'The license is not valid yet',
  expired: 'The license has expired',
  file_expired: 'The license file has expired: check it out again',
  revoked: 'The license has been revoked',
  suspended: 'The license is suspended',
};

/**
 * Online verification (docs/api.md, Verify): every problem that applies is reported, not just the first.
 * The algorithm comes from the key, never from the file's header; the stored status of the serial
 * is consulted only within the caller's organization.
 */
@Injectable()
export class LicenseVerifier {
  private publicKeyCache = new Map<string, KeyObject>();
  /** In one round trip: whether the named product is live (null when none is named), and the serial's stored license. */
  private readonly lookup: (values: unknown[]) => Promise<StoredRow[]>;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly signingKeys: SigningKeysService,
    private readonly serialCache: SerialStatusReader,
    private readonly bus: BusClient,
  ) {
    const catalog = dataSource.getMetadata(CatalogProductEntity).tablePath;
    const licenses = dataSource.getMetadata(LicenseEntity).tablePath;
    this.lookup = preparedStatement<StoredRow>(
      dataSource,
      'license-verify-lookup',
      `SELECT $3::uuid IS NULL OR EXISTS (
                SELECT 1 FROM ${catalog} WHERE id = $3::uuid AND org_id = $1 AND retired_at IS NULL
              ) AS product_live,
              l.id, l.serial, l.org_id AS "orgId", l.product_id AS "productId", l.status,
              l.revoked_at AS "revokedAt", l.valid_until AS "validUntil", l.max_seats AS "maxSeats",
              l.updated_at AS "updatedAt"
         FROM (SELECT 1) AS one
         LEFT JOIN ${licenses} l ON l.serial = $2 AND l.org_id = $1`,
    );
  }

  async verify(orgId: string, dto: VerifyLicenseDto): Promise<VerifyResultView> {
    const suppliedKey = dto.public_key === undefined ? undefined : this.parseSuppliedKey(dto.public_key);
    const productId = dto.product_id ?? null;

    let decoded: DecodedJws | undefined;
    let claims: LicenseClaims | undefined;
    try {
      decoded = decodeJws(jwsFromBlob(dto.license_blob));
      claims = readLicenseClaims(decoded.payload);
    } catch (error) {
      if (!(error instanceof MalformedJwsError)) throw error;
    }
    // An unknown product is a 404 whatever the file holds; the serial is looked up only if there is one.
    const stored = await this.storedState(orgId, claims?.sub, productId);
    if (!stored.productLive) throw DomainError.notFound('Product', productId!);
    if (!decoded || !claims) return invalid(['malformed']);

    const errors: VerifyErrorCode[] = [];
    const key = suppliedKey ?? (await this.keyNamedBy(orgId, decoded.header.kid));
    if (!key) errors.push('unknown_key');
    else if (!verifyJwsSignature(decoded, key)) errors.push('signature_invalid');
    if (dto.product_id !== undefined && claims.product_id !== dto.product_id) errors.push('product_mismatch');
    const now = new Date();
    errors.push(...timeProblems(claims, now));
    const status =
      stored.status && effectiveStatus({ status: stored.status, validUntil: stored.validUntil }, now);
    if (status === 'revoked' || status === 'suspended') errors.push(status);
    if (status === 'expired' && !errors.includes('expired')) errors.push('expired');

    return {
      valid: errors.length === 0,
      license: {
        serial: claims.sub,
        product_id: claims.product_id,
        customer_id: claims.customer_id,
        features: claims.features,
        entitlements: claims.entitlements ?? [],
        valid_from: claims.valid_from,
        valid_until: claims.valid_until,
        is_expired: errors.includes('expired'),
      },
      errors: errors.map((code) => ({ code, message: MESSAGES[code] })),
    };
  }

  /**
   * The serial's stored status and whether the named product is live, from the serial-status cache
   * when it can tell both, else from PostgreSQL (whose answer then fills the cache).
   *
   * The cache is as current as PostgreSQL for what verify needs: a change of status or validity is
   * written through to it before the change is answered (the same promise check-revocation keeps),
   * and a write older than the entry it would replace is refused inside Redis. A cached license of
   * the named product also proves the product live, since a product with licenses cannot be
   * deleted; any other case (no serial, unknown serial, another product) asks PostgreSQL.
   * A serial the cache holds nothing for is filled by the revocation service, the cache's one
   * writer, with the status `toSerialStatus` makes of the row: the same entry an event or a
   * write-through would leave. With Redis down nothing is sent: the fill would fail there too.
   */
  private async storedState(
    orgId: string,
    serial: string | undefined,
    productId: string | null,
  ): Promise<StoredState> {
    let absent = false;
    if (serial !== undefined) {
      const cached = await this.fromCache(orgId, serial, productId);
      if ('state' in cached) return cached.state;
      absent = cached.absent;
    }
    const [row] = await this.lookup([orgId, serial ?? null, productId]);
    if (absent && row.id !== null) this.fill(row);
    return { productLive: row.product_live, status: row.status, validUntil: row.validUntil };
  }

  /** The cache's answer, or whether it holds nothing for the serial (false when it could not be read). */
  private async fromCache(
    orgId: string,
    serial: string,
    productId: string | null,
  ): Promise<{ state: StoredState } | { absent: boolean }> {
    let lookup: CacheLookup;
    try {
      lookup = await this.serialCache.getMany(orgId, [serial]);
    } catch {
      // Redis down or not confirmed: PostgreSQL answers (the cache has logged why).
      return { absent: false };
    }
    const entry = lookup.hits[0];
    const absent = { absent: entry === undefined };
    if (productId !== null && entry?.product_id !== productId) return absent;
    if (entry === undefined)
      return lookup.misses.length > 0
        ? absent
        : { state: { productLive: true, status: null, validUntil: null } };
    return {
      state: {
        productLive: true,
        status: entry.status,
        validUntil: entry.valid_until === null ? null : new Date(entry.valid_until),
      },
    };
  }

  /**
   * Best effort, and not awaited: a failed fill costs the next verify of the serial another
   * PostgreSQL read. A fill that lost a race with a revocation is refused inside Redis (its version
   * is older), as any write of the revocation service is.
   */
  private fill(license: SerialStatusFields): void {
    this.bus.send(Messages.revocation.put, { statuses: [toSerialStatus(license)] }).catch(() => undefined);
  }

  /** A caller-supplied PEM is parsed once and kept: fleets send the same product key again and again. */
  private parseSuppliedKey(pem: string): KeyObject {
    const cached = this.publicKeyCache.get(pem);
    if (cached) return cached;
    let key: KeyObject;
    try {
      key = parsePublicKey(pem);
      // A readable key of a type licenses are never signed with (P-384, RSA < 2048, X25519, ...)
      // is the caller's mistake too, not a 500 from verifyJwsSignature later on.
      keyAlgorithmOf(key);
    } catch (error) {
      if (error instanceof InvalidKeyError || error instanceof UnsupportedKeyError) {
        throw DomainError.validation([
          { field: 'public_key', message: 'public_key must be a PEM (SPKI) public key' },
        ]);
      }
      throw error;
    }
    if (this.publicKeyCache.size >= 1000) this.publicKeyCache = new Map();
    this.publicKeyCache.set(pem, key);
    return key;
  }

  private async keyNamedBy(orgId: string, kid: unknown): Promise<KeyObject | undefined> {
    if (typeof kid !== 'string' || !isUUID(kid)) return undefined;
    return this.signingKeys.publicKey(orgId, kid);
  }
}

interface StoredState {
  productLive: boolean;
  status: LicenseStatus | null;
  validUntil: Date | null;
}

/**
 * The lookup's row: the license's columns, named as the entity's fields so that the row is what
 * `toSerialStatus` takes, or all null when the organization has no such serial.
 */
type StoredRow = { product_live: boolean } & (
  SerialStatusFields | { [Field in keyof SerialStatusFields]: null }
);

function invalid(codes: VerifyErrorCode[]): VerifyResultView {
  return { valid: false, license: null, errors: codes.map((code) => ({ code, message: MESSAGES[code] })) };
}
