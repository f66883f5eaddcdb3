// The JavaScript SDK (libs/license-verifier) runs every committed vector and must answer exactly
// the expected verdict: valid or not, the same error codes in the same order, and the same
// decoded document. The other SDKs run the same files (sdks/conformance/README.md).
import {
  importPublicKey,
  InvalidPublicKeyError,
  verifyActivationFile,
  verifyLicense,
  verifyRevocationList,
  verifySignedAnswer,
  type PublicKeyInput,
  type RevocationList,
} from '@licensing/license-verifier';
import { readVectorFiles } from './src/generate';
import type { KeyInput, Vector, VectorFile } from './src/vector-file';

const files = Object.entries(readVectorFiles()).map(
  ([name, text]) => [name, JSON.parse(text) as VectorFile] as const,
);

/** The options each kind of vector may set: an unknown one would otherwise be silently ignored. */
const OPTIONS: Record<VectorFile['kind'], string[]> = {
  license: ['now', 'product_id', 'fingerprint', 'clock_tolerance_seconds'],
  'revocation-list': ['product_id', 'previous'],
  'signed-answer': ['now', 'max_age_seconds', 'clock_tolerance_seconds'],
  activation: ['now', 'nonce', 'machine_key', 'fingerprint', 'product_id', 'clock_tolerance_seconds'],
  'public-key': [],
};

const codes = (result: { errors: { code: string }[] }): string[] => result.errors.map((error) => error.code);
const ms = (seconds: unknown): number | undefined =>
  seconds === undefined ? undefined : (seconds as number) * 1000;

function keyOf(file: VectorFile, name: string): PublicKeyInput {
  const input: KeyInput | undefined = file.keys[name];
  if (input === undefined) throw new Error(`no key ${name}`);
  if ('pem' in input) return input.pem;
  if ('jwk' in input) return input.jwk as PublicKeyInput;
  return input.jwks as PublicKeyInput;
}

async function run(file: VectorFile, vector: Vector): Promise<Record<string, unknown>> {
  const key = keyOf(file, vector.key);
  const o = vector.options;
  switch (file.kind) {
    case 'license': {
      const input = vector.input as { text?: string; bytes_base64?: string };
      const result = await verifyLicense(
        input.text ?? new Uint8Array(Buffer.from(input.bytes_base64!, 'base64')),
        key,
        {
          now: ms(o['now']),
          productId: o['product_id'] as string | undefined,
          fingerprint: o['fingerprint'] as string | undefined,
          clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
        },
      );
      const license = result.license && (({ claims: _claims, ...summary }) => summary)(result.license);
      return { valid: result.valid, errors: codes(result), license };
    }
    case 'revocation-list': {
      const result = await verifyRevocationList((vector.input as { text: string }).text, key, {
        productId: o['product_id'] as string | undefined,
        previous: o['previous'] as RevocationList | undefined,
      });
      return { valid: result.valid, errors: codes(result), list: result.list };
    }
    case 'signed-answer': {
      const input = vector.input as { body: string; signature: string | null; nonce: string };
      const result = await verifySignedAnswer(input, key, {
        now: ms(o['now']),
        maxAgeSeconds: o['max_age_seconds'] as number | undefined,
        clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
      });
      return { valid: result.valid, errors: codes(result), signed_at: result.signed_at };
    }
    case 'activation': {
      const result = await verifyActivationFile((vector.input as { text: string }).text, key, {
        now: ms(o['now']),
        nonce: o['nonce'] as string | undefined,
        machineKey: o['machine_key'] as Record<string, unknown> | undefined,
        fingerprint: o['fingerprint'] as string | undefined,
        productId: o['product_id'] as string | undefined,
        clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
      });
      return { valid: result.valid, errors: codes(result), activation: result.activation };
    }
    case 'public-key': {
      // Refused keys make every verifier throw before it reads the document.
      const refused = await verifyLicense('', key).then(
        () => false,
        (error: unknown) => {
          if (error instanceof InvalidPublicKeyError) return true;
          throw error;
        },
      );
      if (refused) return { accepted: false };
      const jwks = (file.keys[vector.key] as { jwks?: { keys: unknown[] } }).jwks;
      const imported = await Promise.all(
        (jwks ? jwks.keys : [key]).map((one) =>
          importPublicKey(one as Parameters<typeof importPublicKey>[0]),
        ),
      );
      return {
        accepted: true,
        keys: imported.map(({ type, alg, kid }) => ({ type, alg, kid: kid ?? null })),
      };
    }
    default:
      throw new Error(`unknown kind ${String(file.kind satisfies never)}`);
  }
}

describe.each(files)('%s', (_name, file) => {
  it('names only keys it defines, and options its kind knows', () => {
    for (const vector of file.vectors) {
      expect([vector.id, vector.key in file.keys]).toEqual([vector.id, true]);
      const unknown = Object.keys(vector.options).filter((option) => !OPTIONS[file.kind].includes(option));
      expect([vector.id, unknown]).toEqual([vector.id, []]);
    }
  });

  it.each(file.vectors.map((vector) => [vector.id, vector] as const))('%s', async (_id, vector) => {
    expect(await run(file, vector)).toEqual(vector.expected);
  });
});
