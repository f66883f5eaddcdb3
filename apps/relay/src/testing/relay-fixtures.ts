// Test fixtures: a product key pair of the test's own, and the documents the platform issues to a
// relay (relay files and revocation lists), signed with it exactly as docs/relay.md describes.
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildCheckoutClaims, generateKeyPair, signJws } from '@licensing/license-format';

export interface ProductFixture {
  productId: string;
  kid: string;
  publicKeyPem: string;
  privateKey: KeyObject;
}

export async function productFixture(): Promise<ProductFixture> {
  const pair = await generateKeyPair('ed25519');
  return {
    productId: randomUUID(),
    kid: randomUUID(),
    publicKeyPem: pair.publicKeyPem,
    privateKey: createPrivateKey(pair.privateKeyPem),
  };
}

export interface RelayFileInput {
  /** The relay's public key (its relay request's `public_key`). */
  relayPublicKey: string;
  site: string;
  relayFileId?: string;
  licenseId?: string;
  serial?: string;
  productId?: string;
  seats?: number;
  issuedAt?: Date;
  validFrom?: Date;
  validUntil?: Date | null;
  expiresAt?: Date;
  heartbeatIntervalSeconds?: number | null;
  /** Drops the `relay` claim: an ordinary checkout file. */
  withoutRelay?: boolean;
}

const DAY_MS = 86_400_000;

/**
 * A relay file as the platform issues it: a checkout license blob of a floating license (base64 of
 * the compact JWS), with the claim `relay: {id, site, public_key}` last.
 */
export function relayFile(product: ProductFixture, input: RelayFileInput): string {
  const issuedAt = input.issuedAt ?? new Date();
  const claims = buildCheckoutClaims(
    {
      licenseId: input.licenseId ?? LICENSE_ID,
      serial: input.serial ?? 'LIC-CAD-0000000000000001',
      orgId: ORG_ID,
      productId: input.productId ?? product.productId,
      productCode: 'cad',
      licenseType: 'floating',
      customerId: null,
      customerEmail: 'it@customer.example',
      features: ['render'],
      maxSeats: input.seats ?? 5,
      hardwareBinding: null,
      validFrom: input.validFrom ?? new Date(issuedAt.getTime() - DAY_MS),
      validUntil:
        input.validUntil === undefined ? new Date(issuedAt.getTime() + 365 * DAY_MS) : input.validUntil,
      issuedAt,
    },
    { expiresAt: input.expiresAt ?? new Date(issuedAt.getTime() + 30 * DAY_MS) },
    input.heartbeatIntervalSeconds === undefined
      ? {}
      : {
          policy: {
            id: randomUUID(),
            name: 'floating',
            heartbeat_interval_seconds: input.heartbeatIntervalSeconds,
          },
        },
  );
  const payload = input.withoutRelay
    ? claims
    : {
        ...claims,
        relay: { id: input.relayFileId ?? randomUUID(), site: input.site, public_key: input.relayPublicKey },
      };
  return blob(signJws(payload, { kid: product.kid, privateKey: product.privateKey }));
}

export const LICENSE_ID = '0b9f4a2e-6a43-4c1f-9f38-3f0c6d1f2a11';
const ORG_ID = '5d7e1c3a-2b4f-4e6a-8c9d-0e1f2a3b4c5d';

export const blob = (jws: string): string => Buffer.from(jws, 'utf8').toString('base64');

export interface RevocationListInput {
  version: number;
  entries?: { serial: string; status: 'revoked' | 'suspended' | 'expired'; at?: string }[];
  productId?: string;
}

/** The product's signed revocation list (a full list), as `GET /products/:id/revocation-list` answers. */
export function revocationList(product: ProductFixture, input: RevocationListInput): string {
  const now = new Date();
  return signJws(
    {
      product_id: input.productId ?? product.productId,
      version: input.version,
      issued_at: now.toISOString(),
      next_update: new Date(now.getTime() + 3_600_000).toISOString(),
      entries: (input.entries ?? []).map((entry) => ({ at: now.toISOString(), ...entry })),
    },
    { kid: product.kid, privateKey: product.privateKey },
    'licensing-revocation-list+jwt',
  );
}

/** A temporary directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'relay-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
