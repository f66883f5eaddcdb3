/**
 * The activation file of an air-gapped machine: its claims, apart from the seat taken in
 * PostgreSQL and the signature. The SDKs verify these claims offline with the product's public key;
 * the conformance vectors (sdks/conformance) are made with this function.
 */

/** What an activation file says it is, so that no other file of the exchange is taken for one. */
export const ACTIVATION_TYP = 'activation+jwt';

export interface ActivationFileInput {
  activationId: string;
  serial: string;
  orgId: string;
  licenseId: string;
  productId: string;
  productCode: string;
  features: string[];
  fingerprint: string;
  components: Record<string, string>;
  /** The request's nonce: the file answers that request only. */
  nonce: string;
  /** The machine's Ed25519 public key, from its request. */
  machineKey: { kty: 'OKP'; crv: 'Ed25519'; x: string };
  issuedAt: Date;
  expiresAt: Date;
}

/** The claims of an activation file; it is valid from `issuedAt` until `expiresAt`. */
export function activationFileClaims(input: ActivationFileInput): Record<string, unknown> {
  return {
    v: 1,
    jti: input.activationId,
    sub: input.serial,
    iss: input.orgId,
    license_id: input.licenseId,
    product_id: input.productId,
    product_code: input.productCode,
    features: input.features,
    fingerprint: input.fingerprint,
    components: input.components,
    nonce: input.nonce,
    cnf: { jwk: input.machineKey },
    iat: seconds(input.issuedAt),
    nbf: seconds(input.issuedAt),
    exp: seconds(input.expiresAt),
  };
}

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);
