// Air-gapped activation: the machine writes a request file, the licensing service (reached by
// someone else, from elsewhere) answers a signed activation file, the machine verifies it offline
// with the product's public key; to give the seat back it writes a release file.

import { isDateSeconds } from './claims';
import { base64url, utf8Bytes } from './encoding';
import { importPublicKeys, type PublicKeyInput } from './public-key';
import { decodeCompactJws, keysFor, someVerifies, type DecodedJws } from './jws';
import { timeOf } from './verify-license';
import { randomBytes, subtle } from './webcrypto';

const REQUEST_TYP = 'activation-request+jwt';
const ACTIVATION_TYP = 'activation+jwt';
const RELEASE_TYP = 'activation-release+jwt';

export interface ActivationRequestInput {
  /** The license key: its serial. */
  licenseKey: string;
  /** This machine's fingerprint. */
  fingerprint: string;
  components?: Record<string, string>;
  hostname?: string;
  platform?: string;
}

/** The machine's Ed25519 private key, as a JWK. */
export type MachineKey = Record<string, unknown>;

export interface ActivationRequest {
  /** The request file to carry to the licensing service (`POST /v1/activations/offline`). */
  request: string;
  /**
   * The key generated for this activation, private: keep it on the machine (it never leaves it).
   * It signs the release; `verifyActivationFile` checks the answer was made for it.
   */
  machineKey: MachineKey;
  /** The request's nonce: the answer must echo it. */
  nonce: string;
}

/**
 * Creates an activation request: a fresh Ed25519 key pair for this machine, and the request
 * (license, fingerprint, components, a nonce and the public key) signed with it, so that the
 * service knows the requester holds the key that will have to sign the release.
 */
export async function createActivationRequest(input: ActivationRequestInput): Promise<ActivationRequest> {
  if (!input.licenseKey || !input.fingerprint) {
    throw new TypeError('createActivationRequest needs licenseKey and fingerprint');
  }
  const pair = await subtle().generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const machineKey = (await subtle().exportKey('jwk', pair.privateKey)) as MachineKey;
  const nonce = base64url(randomBytes(24));
  const claims = {
    v: 1,
    license_key: input.licenseKey,
    fingerprint: input.fingerprint,
    ...(input.components === undefined ? {} : { components: input.components }),
    ...(input.hostname === undefined ? {} : { hostname: input.hostname }),
    ...(input.platform === undefined ? {} : { platform: input.platform }),
    nonce,
    iat: Math.floor(Date.now() / 1000),
    jwk: { kty: 'OKP', crv: 'Ed25519', x: machineKey['x'] },
  };
  return { request: await signWithMachineKey(claims, REQUEST_TYP, machineKey), machineKey, nonce };
}

/** Why an activation file is refused. */
export type ActivationErrorCode =
  | 'malformed'
  | 'unknown_key'
  | 'signature_invalid'
  | 'nonce_mismatch'
  | 'machine_key_mismatch'
  | 'fingerprint_mismatch'
  | 'product_mismatch'
  | 'not_yet_valid'
  | 'expired';

export interface VerifiedActivation {
  activation_id: string;
  serial: string;
  license_id: string;
  organization_id: string;
  product_id: string;
  product_code: string;
  features: string[];
  fingerprint: string;
  components: Record<string, string>;
  issued_at: string;
  expires_at: string;
}

export interface ActivationVerifyResult {
  valid: boolean;
  /** The decoded activation whenever the file could be decoded, even when it is not valid. */
  activation: VerifiedActivation | null;
  errors: { code: ActivationErrorCode; message: string }[];
}

export interface ActivationVerifyOptions {
  /** The request's nonce: an answer to another request is refused. */
  nonce?: string;
  /** The machine key of the request: an activation made for another key is refused. */
  machineKey?: MachineKey;
  /** This machine's fingerprint. */
  fingerprint?: string;
  productId?: string;
  now?: Date | number;
  clockToleranceSeconds?: number;
}

const MESSAGES: Record<ActivationErrorCode, string> = {
  malformed: 'The file is not a signed activation file',
  unknown_key: 'The activation was signed by a key pair this key set does not hold',
  signature_invalid: 'The signature does not verify with the key',
  nonce_mismatch: 'The activation answers another request',
  machine_key_mismatch: "The activation was made for another machine's key",
  fingerprint_mismatch: 'The activation is for another machine',
  product_mismatch: 'The activation belongs to another product',
  not_yet_valid: 'The activation is not valid yet',
  expired: 'The activation has expired',
};

/**
 * Verifies an activation file offline with the product's public key (a PEM, JWK or JWK Set, as
 * for `verifyLicense`). The algorithm comes from the key; a bad file is a result, not an error.
 */
export async function verifyActivationFile(
  file: string,
  publicKey: PublicKeyInput,
  options: ActivationVerifyOptions = {},
): Promise<ActivationVerifyResult> {
  const keys = await importPublicKeys(publicKey);
  const nowMs = timeOf(options.now);
  const toleranceMs = (options.clockToleranceSeconds ?? 0) * 1000;
  const decoded = decodeCompact(file, ACTIVATION_TYP);
  const claims = decoded && readActivationClaims(decoded.payload);
  if (!decoded || !claims) return { valid: false, activation: null, errors: [failure('malformed')] };

  const codes: ActivationErrorCode[] = [];
  const candidates = keysFor(keys, decoded.header['kid']);
  if (candidates.length === 0) codes.push('unknown_key');
  else if (!(await someVerifies(decoded, candidates))) codes.push('signature_invalid');
  if (options.nonce !== undefined && claims.nonce !== options.nonce) codes.push('nonce_mismatch');
  if (options.machineKey !== undefined && claims.cnf.jwk.x !== options.machineKey['x']) {
    codes.push('machine_key_mismatch');
  }
  if (options.fingerprint !== undefined && claims.fingerprint !== options.fingerprint) {
    codes.push('fingerprint_mismatch');
  }
  if (options.productId !== undefined && claims.product_id !== options.productId)
    codes.push('product_mismatch');
  if (claims.nbf * 1000 > nowMs + toleranceMs) codes.push('not_yet_valid');
  if (claims.exp * 1000 <= nowMs - toleranceMs) codes.push('expired');
  return {
    valid: codes.length === 0,
    activation: {
      activation_id: claims.jti,
      serial: claims.sub,
      license_id: claims.license_id,
      organization_id: claims.iss,
      product_id: claims.product_id,
      product_code: claims.product_code,
      features: [...claims.features],
      fingerprint: claims.fingerprint,
      components: { ...claims.components },
      issued_at: new Date(claims.iat * 1000).toISOString(),
      expires_at: new Date(claims.exp * 1000).toISOString(),
    },
    errors: codes.map((code) => failure(code)),
  };
}

/**
 * Creates the release file that gives the seat back (`POST /v1/activations/offline/release`),
 * signed with the machine key of the request. Delete the activation file and the key afterwards.
 */
export async function createActivationRelease(
  activationFile: string,
  machineKey: MachineKey,
): Promise<string> {
  const decoded = decodeCompact(activationFile, ACTIVATION_TYP);
  const claims = decoded && readActivationClaims(decoded.payload);
  if (!claims) throw new TypeError('not an activation file');
  const release = {
    v: 1,
    activation_id: claims.jti,
    license_key: claims.sub,
    fingerprint: claims.fingerprint,
    iat: Math.floor(Date.now() / 1000),
  };
  return signWithMachineKey(release, RELEASE_TYP, machineKey);
}

interface ActivationClaims {
  jti: string;
  sub: string;
  iss: string;
  license_id: string;
  product_id: string;
  product_code: string;
  features: string[];
  fingerprint: string;
  components: Record<string, string>;
  nonce: string;
  cnf: { jwk: { x: string } };
  iat: number;
  nbf: number;
  exp: number;
}

function readActivationClaims(payload: Record<string, unknown>): ActivationClaims | undefined {
  const c = payload;
  const isString = (value: unknown): value is string => typeof value === 'string';
  const cnf = c['cnf'] as { jwk?: { x?: unknown } } | undefined;
  const components = c['components'];
  const shaped =
    c['v'] === 1 &&
    ['jti', 'sub', 'iss', 'license_id', 'product_id', 'product_code', 'fingerprint', 'nonce'].every((name) =>
      isString(c[name]),
    ) &&
    Array.isArray(c['features']) &&
    c['features'].every(isString) &&
    typeof components === 'object' &&
    components !== null &&
    Object.values(components).every(isString) &&
    isString(cnf?.jwk?.x) &&
    ['iat', 'nbf', 'exp'].every((name) => Number.isSafeInteger(c[name]) && isDateSeconds(c[name] as number));
  return shaped ? (c as unknown as ActivationClaims) : undefined;
}

type Compact = DecodedJws & { payload: Record<string, unknown> };

/** A compact JWS of the given `typ` with a JSON object payload, taken apart (nothing verified yet). */
function decodeCompact(token: string, typ: string): Compact | undefined {
  if (typeof token !== 'string') return undefined;
  const decoded = decodeCompactJws(token.trim());
  if (!decoded?.payload || decoded.header['typ'] !== typ) return undefined;
  return decoded as Compact;
}

async function signWithMachineKey(payload: object, typ: string, machineKey: MachineKey): Promise<string> {
  const { d, x } = machineKey;
  if (
    machineKey['kty'] !== 'OKP' ||
    machineKey['crv'] !== 'Ed25519' ||
    typeof d !== 'string' ||
    typeof x !== 'string'
  ) {
    throw new TypeError('the machine key is an Ed25519 private JWK');
  }
  const key = await subtle().importKey(
    'jwk',
    { kty: 'OKP', crv: 'Ed25519', d, x },
    { name: 'Ed25519' },
    false,
    ['sign'],
  );
  const signingInput = `${encodeJson({ alg: 'EdDSA', typ })}.${encodeJson(payload)}`;
  const signature = await subtle().sign({ name: 'Ed25519' }, key, utf8Bytes(signingInput));
  return `${signingInput}.${base64url(new Uint8Array(signature))}`;
}

const encodeJson = (value: object): string => base64url(utf8Bytes(JSON.stringify(value)));

const failure = (code: ActivationErrorCode) => ({ code, message: MESSAGES[code] });
