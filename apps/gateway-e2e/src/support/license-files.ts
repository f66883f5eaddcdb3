import { constants, createHmac, createPublicKey, sign, type KeyObject } from 'node:crypto';
import {
  generateKeyPair,
  jwsAlgorithmFor,
  parsePrivateKey,
  type KeyAlgorithm,
} from '@licensing/license-format';
import { ApiClient } from '@licensing/shared/testing';
import { createLicense, decodeBlob, jwsOf, productWithKeyPair, segmentOf } from './fixtures';

/**
 * License files the running service issued, for each key algorithm, and the ways they can be
 * wrong, each with the error codes an offline verifier must answer. Plain data (strings, numbers),
 * so the same cases run in Node and in a browser page.
 */

export const ALGORITHMS: KeyAlgorithm[] = ['ed25519', 'ecdsa-p256', 'rsa-3072'];

export interface IssuedFiles {
  algorithm: KeyAlgorithm;
  product: any;
  /** The product's public key (SPKI PEM), as GET /products/:id/public-key serves it. */
  pem: string;
  /** The same key as a JWK, with the key pair id as kid. */
  jwk: Record<string, unknown>;
  /** A license of the product, downloaded as the .lic bytes (text). */
  jws: string;
  license: any;
  /** A node-locked license bound to `machine-a`. */
  bound: string;
  /** A license whose valid_until was moved into the past (re-signed by the service). */
  expired: string;
  /** Another product of the organization, with its own key pair, and one of its licenses. */
  otherProduct: any;
  otherPem: string;
  otherJws: string;
  /** A key pair of our own, standing in for an attacker's. */
  attacker: { pem: string; privateKey: KeyObject };
}

export interface VerifierCase {
  name: string;
  algorithm: KeyAlgorithm;
  input: string;
  publicKey: string | Record<string, unknown>;
  options: { now?: number; productId?: string; fingerprint?: string };
  expected: string[];
  /** The online verify in public_key mode must answer the same codes (no options, no JWK). */
  comparableOnline: boolean;
}

export async function issueLicenseFiles(api: ApiClient, algorithm: KeyAlgorithm): Promise<IssuedFiles> {
  const [{ product, keyPair }, other, attacker] = await Promise.all([
    productWithKeyPair(api, { default_features: ['basic'], default_valid_days: 30 }, algorithm),
    productWithKeyPair(api, {}, algorithm),
    generateKeyPair(algorithm),
  ]);
  const publicKey = async (id: string) => {
    const response = await api.get(`/api/v1/products/${id}/public-key`);
    expect(response.status).toBe(200);
    return response.body.public_key as string;
  };
  const [pem, otherPem] = await Promise.all([publicKey(product.id), publicKey(other.product.id)]);
  const [license, boundLicense, toExpire, otherLicense] = await Promise.all([
    createLicense(api, { product_id: product.id, customer_id: 'cus_honest' }),
    createLicense(api, {
      product_id: product.id,
      license_type: 'node_locked',
      hardware_binding: { fingerprint: 'machine-a' },
    }),
    createLicense(api, { product_id: product.id }),
    createLicense(api, { product_id: other.product.id }),
  ]);
  const download = await fetch(`${api.baseUrl}/api/v1/licenses/${license.id}/download`, {
    headers: { authorization: `Bearer ${api.apiKey}` },
  });
  expect(download.status).toBe(200);
  const expired = await api.patch(`/api/v1/licenses/${toExpire.id}`, { valid_until: toExpire.valid_from });
  expect(expired.status).toBe(200);
  return {
    algorithm,
    product,
    pem,
    jwk: { ...createPublicKey(pem).export({ format: 'jwk' }), kid: keyPair.id },
    jws: await download.text(),
    license,
    bound: jwsOf(boundLicense.license_blob),
    expired: jwsOf(expired.body.license_blob),
    otherProduct: other.product,
    otherPem,
    otherJws: jwsOf(otherLicense.license_blob),
    attacker: { pem: attacker.publicKeyPem, privateKey: parsePrivateKey(attacker.privateKeyPem) },
  };
}

function signatureOver(input: string, algorithm: KeyAlgorithm, key: KeyObject): string {
  const data = Buffer.from(input, 'utf8');
  switch (algorithm) {
    case 'ed25519':
      return sign(null, data, key).toString('base64url');
    case 'ecdsa-p256':
      return sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    case 'rsa-3072':
      return sign('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }).toString(
        'base64url',
      );
  }
}

/** The ES256 R||S signature re-encoded as ASN.1 DER, which JWS does not allow. */
function derOf(raw: Buffer): Buffer {
  const integer = (bytes: Buffer) => {
    let trimmed = bytes;
    while (trimmed.length > 1 && trimmed[0] === 0 && trimmed[1]! < 0x80) trimmed = trimmed.subarray(1);
    if (trimmed[0]! >= 0x80) trimmed = Buffer.concat([Buffer.from([0]), trimmed]);
    return Buffer.concat([Buffer.from([0x02, trimmed.length]), trimmed]);
  };
  const body = Buffer.concat([integer(raw.subarray(0, 32)), integer(raw.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

export function verifierCases(files: IssuedFiles): VerifierCase[] {
  const { algorithm, jws, pem } = files;
  const [h, p, s] = jws.split('.') as [string, string, string];
  const { header, claims } = decodeBlob(Buffer.from(jws).toString('base64'));
  const alg = jwsAlgorithmFor(algorithm);
  const nbfMs = (claims.nbf as number) * 1000;
  const signature = Buffer.from(s, 'base64url');
  const rewritten = (changes: { header?: object; claims?: object; signature?: string }) =>
    `${segmentOf({ ...header, ...changes.header })}.${segmentOf({ ...claims, ...changes.claims })}.${changes.signature ?? s}`;
  const attackerSigned = (hdr: object, payload: object) => {
    const input = `${segmentOf(hdr)}.${segmentOf(payload)}`;
    return `${input}.${signatureOver(input, algorithm, files.attacker.privateKey)}`;
  };
  const hs256 = (secret: string | Buffer) => {
    const input = `${segmentOf({ ...header, alg: 'HS256' })}.${segmentOf({ ...claims, features: ['enterprise'] })}`;
    return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
  };
  const der = createPublicKey(pem).export({ type: 'spki', format: 'der' });
  const base = { algorithm, publicKey: pem, options: {}, comparableOnline: true };
  const sig = ['signature_invalid'];
  const cases: Omit<VerifierCase, 'algorithm' | 'publicKey' | 'options' | 'comparableOnline'>[] = [
    { name: 'the genuine downloaded file', input: jws, expected: [] },
    { name: 'the genuine file as a license_blob', input: files.license.license_blob, expected: [] },
    {
      name: 'a payload with upgraded features, genuine signature kept',
      input: rewritten({ claims: { features: ['enterprise'] } }),
      expected: sig,
    },
    {
      name: 'a payload made perpetual, genuine signature kept',
      input: (() => {
        const { exp: _exp, ...perpetual } = claims;
        return `${h}.${segmentOf({ ...perpetual, valid_until: null })}.${s}`;
      })(),
      expected: sig,
    },
    {
      name: 'a header with another kid, genuine signature kept',
      input: rewritten({ header: { kid: files.otherProduct.key_pair_id } }),
      expected: sig,
    },
    {
      name: 'alg none with an empty signature',
      input: rewritten({ header: { alg: 'none' }, signature: '' }),
      expected: sig,
    },
    { name: 'alg none keeping the signature', input: rewritten({ header: { alg: 'none' } }), expected: sig },
    { name: "HS256 keyed with the public key's PEM", input: hs256(pem), expected: sig },
    { name: "HS256 keyed with the public key's DER", input: hs256(der), expected: sig },
    ...['EdDSA', 'ES256', 'PS256', 'RS256', 'ES384']
      .filter((other) => other !== alg)
      .map((other) => ({
        name: `header alg ${other}, genuine signature kept`,
        input: rewritten({ header: { alg: other } }),
        expected: sig,
      })),
    {
      name: 'features upgraded and re-signed by an attacker under the genuine kid',
      input: attackerSigned(header, { ...claims, features: ['enterprise'] }),
      expected: sig,
    },
    {
      name: 'a crit header, genuine signature kept',
      input: rewritten({ header: { crit: ['exp'], exp: 1 } }),
      expected: sig,
    },
    {
      name: 'duplicate alg members, "none" last',
      input: `${Buffer.from(JSON.stringify(header).replace(/\}$/, ',"alg":"none"}')).toString('base64url')}.${p}.${s}`,
      expected: sig,
    },
    {
      name: 'the signature truncated by one byte',
      input: rewritten({ signature: signature.subarray(0, -1).toString('base64url') }),
      expected: sig,
    },
    {
      name: 'the signature with its last byte flipped',
      input: rewritten({
        signature: Buffer.from(signature.map((b, i) => (i === signature.length - 1 ? b ^ 1 : b))).toString(
          'base64url',
        ),
      }),
      expected: sig,
    },
    {
      name: 'an all-zero signature of the right length',
      input: rewritten({ signature: Buffer.alloc(signature.length).toString('base64url') }),
      expected: sig,
    },
    ...(algorithm === 'ecdsa-p256'
      ? [
          {
            name: 'the ES256 signature as DER instead of R||S',
            input: rewritten({ signature: derOf(signature).toString('base64url') }),
            expected: sig,
          },
        ]
      : []),
    { name: 'a fourth segment', input: `${jws}.${segmentOf({ extra: true })}`, expected: ['malformed'] },
    { name: 'garbage after the signature', input: `${jws} <garbage>`, expected: ['malformed'] },
    {
      name: 'the signature in standard base64',
      input: `${h}.${p}.${signature.toString('base64')}x`,
      expected: ['malformed'],
    },
    { name: 'the patched, expired file', input: files.expired, expected: ['expired'] },
  ];
  return [
    ...cases.map((c) => ({ ...base, ...c })),
    {
      ...base,
      name: 'the file verified before its valid_from',
      input: jws,
      options: { now: nbfMs - 3_600_000 },
      expected: ['not_yet_valid'],
      comparableOnline: false,
    },
    {
      ...base,
      name: 'the file verified a second after its valid_until',
      input: jws,
      options: { now: (claims.exp as number) * 1000 + 1000 },
      expected: ['expired'],
      comparableOnline: false,
    },
    {
      ...base,
      name: 'the product key as a JWK with its kid',
      input: jws,
      publicKey: files.jwk,
      expected: [],
      comparableOnline: false,
    },
    {
      ...base,
      name: 'a JWK of another key pair id (unknown_key)',
      input: jws,
      publicKey: { ...files.jwk, kid: files.otherProduct.key_pair_id },
      expected: ['unknown_key'],
      comparableOnline: false,
    },
    { ...base, name: "another product's key", input: jws, publicKey: files.otherPem, expected: sig },
    { ...base, name: "an attacker's key", input: jws, publicKey: files.attacker.pem, expected: sig },
    {
      ...base,
      name: "another product's license checked for this product",
      input: files.otherJws,
      options: { productId: files.product.id },
      expected: ['signature_invalid', 'product_mismatch'],
      comparableOnline: false,
    },
    {
      ...base,
      name: "another product's license with its own key, checked for this product",
      input: files.otherJws,
      publicKey: files.otherPem,
      options: { productId: files.product.id },
      expected: ['product_mismatch'],
      comparableOnline: false,
    },
    {
      ...base,
      name: 'a node-locked file on its own machine',
      input: files.bound,
      options: { fingerprint: 'machine-a', productId: files.product.id },
      expected: [],
      comparableOnline: false,
    },
    {
      ...base,
      name: 'a node-locked file on another machine',
      input: files.bound,
      options: { fingerprint: 'machine-b' },
      expected: ['fingerprint_mismatch'],
      comparableOnline: false,
    },
  ].map((c) => ({ ...c, name: `${algorithm}: ${c.name}` }));
}
