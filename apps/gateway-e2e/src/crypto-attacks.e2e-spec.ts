import { KeyObject, constants, createHmac, createPublicKey, randomUUID, sign } from 'node:crypto';
import {
  KeyAlgorithm,
  blobFromJws,
  buildClaims,
  generateKeyPair,
  generateSerial,
  jwsAlgorithmFor,
  parsePrivateKey,
} from '@licensing/license-format';
import { ApiClient, compactVerifyWithJose } from '@licensing/shared/testing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import {
  createLicense,
  decodeBlob,
  errorCodes,
  jwsOf,
  productWithKeyPair,
  segmentOf,
} from './support/fixtures';

/**
 * Forged and mangled license files, for each of the three key algorithms, against the online
 * verifier (POST /licenses/verify, in product_id and in public_key mode) and the offline one (jose's
 * compactVerify with the product's public key and the algorithm pinned). Every forgery must come
 * back `valid: false` with the contract's error code — never `valid: true`, never a 5xx — and jose
 * must refuse every one of them too.
 */

const ALGORITHMS: KeyAlgorithm[] = ['ed25519', 'ecdsa-p256', 'rsa-3072'];
const OTHER_ALG: Record<KeyAlgorithm, string[]> = {
  ed25519: ['ES256', 'PS256', 'RS256', 'HS256', 'ES384'],
  'ecdsa-p256': ['EdDSA', 'Ed25519', 'PS256', 'ES384', 'ES256K', 'HS256'],
  'rsa-3072': ['RS256', 'PS384', 'PS512', 'EdDSA', 'ES256', 'HS256'],
};

/** Signs `header.payload` (both already base64url) as a JWS signature with `algorithm`'s scheme. */
function signatureOver(signingInput: string, algorithm: KeyAlgorithm, privateKey: KeyObject): string {
  const data = Buffer.from(signingInput, 'utf8');
  switch (algorithm) {
    case 'ed25519':
      return sign(null, data, privateKey).toString('base64url');
    case 'ecdsa-p256':
      return sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    case 'rsa-3072':
      return sign('sha256', data, {
        key: privateKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: 32,
      }).toString('base64url');
  }
}

/** A compact JWS from raw segment texts (JSON written by hand, duplicate keys and all), signed by `key`. */
function signRaw(headerJson: string, payloadJson: string, algorithm: KeyAlgorithm, key: KeyObject): string {
  const input = `${Buffer.from(headerJson).toString('base64url')}.${Buffer.from(payloadJson).toString('base64url')}`;
  return `${input}.${signatureOver(input, algorithm, key)}`;
}

const bytesOf = (segment: string): Buffer => Buffer.from(segment, 'base64url');

interface Attack {
  name: string;
  /** The forged compact JWS. */
  token: () => string;
  /** The error codes verify answers with product_id, and with the product's public_key. */
  productMode: string[];
  keyMode: string[];
}

describe('crypto attacks on license files, online (verify, validate) and offline (jose)', () => {
  let stack: TestStack;
  let orgA: TestOrganization;
  let orgB: TestOrganization;

  interface Setup {
    product: any;
    keyPair: any;
    pem: string;
    /** A's second key pair of the same algorithm, used by no product. */
    sibling: any;
    /** A's key pair of another algorithm. */
    otherAlgorithm: any;
    license: any;
    /** Org B's product of the same algorithm and one of its genuine licenses. */
    foreignKeyPair: any;
    foreignLicense: any;
    /** The attacker's own key pair of the same algorithm. */
    attacker: { pem: string; privateKey: KeyObject };
  }
  const setups = {} as Record<KeyAlgorithm, Setup>;

  /**
   * A genuine license whose signature segment holds a '-' or '_', so that its standard base64 form
   * differs by '+' or '/' and not by padding alone (which jose rightly tolerates): about one
   * signature in twenty has neither, and the standard-base64 attack would then be no attack.
   */
  async function licenseWithUrlSafeSignature(api: ApiClient, productId: string): Promise<any> {
    for (let attempt = 1; ; attempt++) {
      const license = await createLicense(api, { product_id: productId, customer_id: 'cus_honest' });
      if (/[-_]/.test(decodeBlob(license.license_blob).segments[2]!) || attempt === 20) return license;
    }
  }

  beforeAll(async () => {
    stack = await startStack();
    [orgA, orgB] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    for (const algorithm of ALGORITHMS) {
      const [{ product, keyPair }, foreign, sibling, attacker] = await Promise.all([
        productWithKeyPair(orgA.api, { default_features: ['basic'], default_valid_days: 30 }, algorithm),
        productWithKeyPair(orgB.api, { default_features: ['basic'] }, algorithm),
        orgA.api.post('/api/v1/key-pairs', { algorithm }),
        generateKeyPair(algorithm),
      ]);
      expect(sibling.status).toBe(201);
      const otherAlgorithm = await orgA.api.post('/api/v1/key-pairs', {
        algorithm: algorithm === 'ed25519' ? 'ecdsa-p256' : 'ed25519',
      });
      expect(otherAlgorithm.status).toBe(201);
      const pem = (await orgA.api.get(`/api/v1/products/${product.id}/public-key`)).body.public_key as string;
      setups[algorithm] = {
        product,
        keyPair,
        pem,
        sibling: sibling.body,
        otherAlgorithm: otherAlgorithm.body,
        license: await licenseWithUrlSafeSignature(orgA.api, product.id),
        foreignKeyPair: foreign.keyPair,
        foreignLicense: await createLicense(orgB.api, { product_id: foreign.product.id }),
        attacker: { pem: attacker.publicKeyPem, privateKey: parsePrivateKey(attacker.privateKeyPem) },
      };
    }
  }, 60_000);
  afterAll(() => stack.close());

  function attacksOn(algorithm: KeyAlgorithm): Attack[] {
    const s = (): Setup => setups[algorithm];
    const parts = () => decodeBlob(s().license.license_blob);
    /** The genuine token with header and/or claims changed, the genuine signature kept unless given. */
    const rewritten = (changes: { header?: object; claims?: object; signature?: string }) => {
      const { header, claims, segments } = parts();
      return `${segmentOf({ ...header, ...changes.header })}.${segmentOf({ ...claims, ...changes.claims })}.${changes.signature ?? segments[2]}`;
    };
    /** Header and claims as given, signed by the attacker's key of the same algorithm. */
    const attackerSigned = (header: object, claims: object) =>
      signRaw(JSON.stringify(header), JSON.stringify(claims), algorithm, s().attacker.privateKey);
    const genuine = () => jwsOf(s().license.license_blob);
    const alg = jwsAlgorithmFor(algorithm);
    const sig = ['signature_invalid'];
    const malformed = ['malformed'];

    const attacks: Attack[] = [
      {
        name: 'alg "none" with an empty signature',
        token: () => rewritten({ header: { alg: 'none' }, signature: '' }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'alg "none" keeping the genuine signature',
        token: () => rewritten({ header: { alg: 'none' } }),
        productMode: sig,
        keyMode: sig,
      },
      ...(['pem', 'der'] as const).map((form): Attack => ({
        name: `HS256 with upgraded features, HMAC-keyed with the public key's ${form.toUpperCase()} bytes`,
        token: () => {
          const { header, claims } = parts();
          const input = `${segmentOf({ ...header, alg: 'HS256' })}.${segmentOf({ ...claims, features: ['enterprise'] })}`;
          const secret =
            form === 'pem' ? s().pem : createPublicKey(s().pem).export({ type: 'spki', format: 'der' });
          return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
        },
        productMode: sig,
        keyMode: sig,
      })),
      {
        name: "another organization's genuine license (valid signature by its own key pair)",
        token: () => jwsOf(s().foreignLicense.license_blob),
        productMode: ['unknown_key', 'product_mismatch'],
        keyMode: sig,
      },
      {
        name: "the same payload signed by the attacker, naming another organization's key pair as kid",
        token: () => attackerSigned({ ...parts().header, kid: s().foreignKeyPair.id }, parts().claims),
        productMode: ['unknown_key'],
        keyMode: sig,
      },
      {
        name: 'kid re-pointed at another key pair of the same organization and algorithm',
        token: () => rewritten({ header: { kid: s().sibling.id } }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'kid re-pointed at a key pair of the same organization of another algorithm',
        token: () => rewritten({ header: { kid: s().otherAlgorithm.id } }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: "kid re-pointed at another organization's key pair",
        token: () => rewritten({ header: { kid: s().foreignKeyPair.id } }),
        productMode: ['unknown_key'],
        keyMode: sig,
      },
      {
        name: "features upgraded and re-signed by the attacker's key under the genuine kid",
        token: () => attackerSigned(parts().header, { ...parts().claims, features: ['basic', 'enterprise'] }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'features upgraded, genuine signature kept',
        token: () => rewritten({ claims: { features: ['basic', 'enterprise'] } }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'exp and valid_until stripped (made perpetual), genuine signature kept',
        token: () => {
          const { header, claims, segments } = parts();
          const { exp: _exp, ...perpetual } = claims;
          return `${segmentOf(header)}.${segmentOf({ ...perpetual, valid_until: null })}.${segments[2]}`;
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'exp stripped and re-signed by the attacker under the genuine kid',
        token: () => {
          const { exp: _exp, ...perpetual } = parts().claims;
          return attackerSigned(parts().header, { ...perpetual, valid_until: null });
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'signature truncated by one byte',
        token: () =>
          rewritten({ signature: bytesOf(parts().segments[2]!).subarray(0, -1).toString('base64url') }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'signature truncated to half its length',
        token: () => {
          const signature = bytesOf(parts().segments[2]!);
          return rewritten({ signature: signature.subarray(0, signature.length / 2).toString('base64url') });
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'signature extended with zero bytes',
        token: () =>
          rewritten({
            signature: Buffer.concat([bytesOf(parts().segments[2]!), Buffer.alloc(3)]).toString('base64url'),
          }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'signature doubled (two signatures back to back)',
        token: () => {
          const signature = bytesOf(parts().segments[2]!);
          return rewritten({ signature: Buffer.concat([signature, signature]).toString('base64url') });
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'an all-zero signature of the right length (ECDSA\'s r = s = 0 "psychic signature")',
        token: () =>
          rewritten({ signature: Buffer.alloc(bytesOf(parts().segments[2]!).length).toString('base64url') }),
        productMode: sig,
        keyMode: sig,
      },
      ...(algorithm === 'ecdsa-p256'
        ? [
            {
              name: 'the genuine ES256 signature re-encoded as DER instead of R||S',
              token: () => {
                const raw = bytesOf(parts().segments[2]!);
                const integer = (bytes: Buffer) => {
                  let trimmed = bytes;
                  while (trimmed.length > 1 && trimmed[0] === 0 && trimmed[1]! < 0x80)
                    trimmed = trimmed.subarray(1);
                  if (trimmed[0]! >= 0x80) trimmed = Buffer.concat([Buffer.from([0]), trimmed]);
                  return Buffer.concat([Buffer.from([0x02, trimmed.length]), trimmed]);
                };
                const body = Buffer.concat([integer(raw.subarray(0, 32)), integer(raw.subarray(32))]);
                const der = Buffer.concat([Buffer.from([0x30, body.length]), body]);
                return rewritten({ signature: der.toString('base64url') });
              },
              productMode: sig,
              keyMode: sig,
            },
          ]
        : []),
      {
        name: 'a fourth segment appended',
        token: () => `${genuine()}.${segmentOf({ extra: true })}`,
        productMode: malformed,
        keyMode: malformed,
      },
      {
        name: 'a fifth and a sixth segment (JWE-shaped)',
        token: () => `${genuine()}.AAAA.BBBB.CCCC`,
        productMode: malformed,
        keyMode: malformed,
      },
      {
        name: 'trailing garbage after the signature',
        token: () => `${genuine()} <garbage>`,
        productMode: malformed,
        keyMode: malformed,
      },
      {
        name: 'the header segment in standard base64 with padding (non-url characters)',
        token: () => {
          const [header, payload, signature] = parts().segments as [string, string, string];
          return `${bytesOf(header).toString('base64')}=.${payload}.${signature}`;
        },
        productMode: malformed,
        keyMode: malformed,
      },
      {
        name: "the signature segment in standard base64 ('+', '/', '=')",
        token: () => {
          const [header, payload, signature] = parts().segments as [string, string, string];
          const standard = bytesOf(signature).toString('base64');
          return `${header}.${payload}.${/[+/=]/.test(standard) ? standard : `${standard}=`}`;
        },
        productMode: malformed,
        keyMode: malformed,
      },
      ...OTHER_ALG[algorithm].map((other): Attack => ({
        name: `header alg ${other} over the ${algorithm} key, genuine signature kept`,
        token: () => rewritten({ header: { alg: other } }),
        productMode: sig,
        keyMode: sig,
      })),
      {
        name: `header alg ${other(algorithm)} re-signed by the attacker (algorithm confusion)`,
        token: () => attackerSigned({ ...parts().header, alg: other(algorithm) }, parts().claims),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'a crit header naming an extension, genuine signature kept',
        token: () => rewritten({ header: { crit: ['exp'], exp: 1 } }),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'b64:false (RFC 7797) with the raw JSON payload, re-signed by the attacker',
        token: () => {
          const header = segmentOf({ ...parts().header, b64: false, crit: ['b64'] });
          const payload = JSON.stringify({ ...parts().claims, features: ['enterprise'] });
          return `${header}.${payload}.${signatureOver(`${header}.${payload}`, algorithm, s().attacker.privateKey)}`;
        },
        productMode: malformed,
        keyMode: malformed,
      },
      {
        name: 'b64:false with a base64url payload, re-signed by the attacker',
        token: () =>
          attackerSigned(
            { ...parts().header, b64: false, crit: ['b64'] },
            { ...parts().claims, features: ['enterprise'] },
          ),
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'duplicate "alg" members in the header ("none" last), genuine signature kept',
        token: () => {
          const { header, segments } = parts();
          const json = JSON.stringify(header)
            .replace(/^\{/, `{"alg":"${alg}",`)
            .replace(/\}$/, ',"alg":"none"}');
          return `${Buffer.from(json).toString('base64url')}.${segments[1]}.${segments[2]}`;
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'duplicate "features" members in the payload (the upgrade last), re-signed by the attacker',
        token: () => {
          const json = JSON.stringify(parts().claims).replace(/\}$/, ',"features":["enterprise"]}');
          return signRaw(JSON.stringify(parts().header), json, algorithm, s().attacker.privateKey);
        },
        productMode: sig,
        keyMode: sig,
      },
      {
        name: 'duplicate "features" members in the payload, genuine signature kept',
        token: () => {
          const { segments, claims } = parts();
          const json = JSON.stringify(claims).replace(/\}$/, ',"features":["enterprise"]}');
          return `${segments[0]}.${Buffer.from(json).toString('base64url')}.${segments[2]}`;
        },
        productMode: sig,
        keyMode: sig,
      },
    ];
    return attacks;
  }

  /** An algorithm whose family differs from the key's, for an attacker-signed confusion token. */
  function other(algorithm: KeyAlgorithm): string {
    return algorithm === 'ed25519' ? 'ES256' : 'EdDSA';
  }

  describe.each(ALGORITHMS)('%s', (algorithm) => {
    it('accepts the genuine license online and offline (the control every attack below is a change of)', async () => {
      const s = setups[algorithm];
      for (const mode of [{ product_id: s.product.id }, { public_key: s.pem }]) {
        const response = await orgA.api.post('/api/v1/licenses/verify', {
          license_blob: s.license.license_blob,
          ...mode,
        });
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ valid: true, errors: [] });
      }
      expect(
        await compactVerifyWithJose([jwsOf(s.license.license_blob)], s.pem, jwsAlgorithmFor(algorithm)),
      ).toEqual([null]);
    });

    it.each(attacksOn(algorithm).map((attack) => [attack.name, attack] as const))(
      'rejects %s: valid false with the contract code in both verify modes, never a 5xx',
      async (_name, attack) => {
        const s = setups[algorithm];
        const blob = blobFromJws(attack.token());
        for (const [mode, expected] of [
          [{ product_id: s.product.id }, attack.productMode],
          [{ public_key: s.pem }, attack.keyMode],
        ] as const) {
          const response = await orgA.api.post('/api/v1/licenses/verify', { license_blob: blob, ...mode });
          expect({
            mode: Object.keys(mode)[0],
            status: response.status,
            codes: errorCodes(response.body),
          }).toEqual({
            mode: Object.keys(mode)[0],
            status: 200,
            codes: expected,
          });
          expect(response.body.valid).toBe(false);
        }
      },
    );

    it('has jose refuse every forged token with the product public key and the algorithm pinned', async () => {
      const s = setups[algorithm];
      const attacks = attacksOn(algorithm);
      const results = await compactVerifyWithJose(
        attacks.map((attack) => attack.token()),
        s.pem,
        jwsAlgorithmFor(algorithm),
      );
      attacks.forEach((attack, i) =>
        expect({ attack: attack.name, refused: results[i] !== null }).toEqual({
          attack: attack.name,
          refused: true,
        }),
      );
    });
  });

  describe('controls in public_key mode: the attacker key makes a token verify, so crit and b64 alone must fail it', () => {
    it.each(ALGORITHMS)(
      'rejects a crit or b64:false header over a token that verifies without it (%s)',
      async (algorithm) => {
        const s = setups[algorithm];
        const claims = buildClaims({
          licenseId: randomUUID(),
          serial: generateSerial('forged'),
          orgId: orgA.id,
          productId: s.product.id,
          productCode: 'forged',
          licenseType: 'subscription',
          customerId: null,
          customerEmail: null,
          features: ['enterprise'],
          maxSeats: 1,
          hardwareBinding: null,
          validFrom: new Date(Date.now() - 60_000),
          validUntil: null,
          issuedAt: new Date(),
        });
        const header = { alg: jwsAlgorithmFor(algorithm), typ: 'license+jwt', kid: randomUUID() };
        const sign = (h: object) =>
          blobFromJws(signRaw(JSON.stringify(h), JSON.stringify(claims), algorithm, s.attacker.privateKey));
        const verify = async (blob: string) =>
          (await orgA.api.post('/api/v1/licenses/verify', { license_blob: blob, public_key: s.attacker.pem }))
            .body;

        expect(await verify(sign(header))).toMatchObject({ valid: true, errors: [] });
        for (const extended of [
          { ...header, crit: ['exp'], exp: 1 },
          { ...header, crit: ['b64'], b64: false },
          { ...header, crit: [] },
        ]) {
          const body = await verify(sign(extended));
          expect({ header: extended, valid: body.valid, codes: errorCodes(body) }).toEqual({
            header: extended,
            valid: false,
            codes: ['signature_invalid'],
          });
        }
        // And the product's own key, the one that matters, refuses the attacker's clean token.
        const withProduct = await orgA.api.post('/api/v1/licenses/verify', {
          license_blob: sign(header),
          product_id: s.product.id,
        });
        expect(errorCodes(withProduct.body)).toEqual(['unknown_key']);
      },
    );
  });

  describe('validate by key', () => {
    it('answers NOT_FOUND for the serial of a forged file and for wildcard-looking or case-changed serials', async () => {
      const s = setups.ed25519;
      const client = await clientKey();
      const forgedSerial = decodeBlob(
        blobFromJws(
          signRaw(
            JSON.stringify(decodeBlob(s.license.license_blob).header),
            JSON.stringify({ ...decodeBlob(s.license.license_blob).claims, sub: generateSerial('forged') }),
            'ed25519',
            s.attacker.privateKey,
          ),
        ),
      ).claims.sub as string;
      for (const key of [
        forgedSerial,
        'LIC-%',
        `${s.license.serial.slice(0, -1)}_`,
        `${s.license.serial.slice(0, -1)}%`,
        s.license.serial.toLowerCase(),
      ]) {
        const response = await client.post('/api/v1/licenses/validate', { key });
        expect({
          key,
          status: response.status,
          valid: response.body.valid,
          code: response.body.code,
        }).toEqual({
          key,
          status: 200,
          valid: false,
          code: 'NOT_FOUND',
        });
      }
      const genuine = await client.post('/api/v1/licenses/validate', { key: s.license.serial });
      expect(genuine.body).toMatchObject({ valid: true, code: 'VALID' });
    });
  });

  async function clientKey() {
    const created = await orgA.api.post('/api/v1/api-keys', { name: 'app', scopes: ['client'] });
    expect(created.status).toBe(201);
    return orgA.api.withKey(created.body.key as string);
  }
});
