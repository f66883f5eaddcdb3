// The shape of the committed vector files (sdks/conformance/README.md describes it).
import type { TestKey } from './test-keys';

/** The fixed "now" most vectors are evaluated at: 2027-03-01T12:00:00Z, in Unix seconds. */
export const NOW = Date.parse('2027-03-01T12:00:00Z') / 1000;
export const DAY = 86_400;

/** What a verifier is given as the public key, exactly one member. */
export type KeyInput = { pem: string } | { jwk: unknown } | { jwks: unknown };

export interface Vector {
  id: string;
  description: string;
  /** A name in the file's `keys`. */
  key: string;
  input: Record<string, unknown>;
  options: Record<string, unknown>;
  expected: Record<string, unknown>;
}

export interface VectorFile {
  kind: 'license' | 'revocation-list' | 'signed-answer' | 'activation' | 'public-key';
  description: string;
  keys: Record<string, KeyInput>;
  vectors: Vector[];
}

/** A public JWK as the platform publishes one: key material, `kid`, `alg` and `use`. */
export function publishedJwk(key: TestKey, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const alg = key.jwk['kty'] === 'OKP' ? 'EdDSA' : key.jwk['kty'] === 'EC' ? 'ES256' : 'PS256';
  return { ...key.jwk, ...(key.kid === undefined ? {} : { kid: key.kid }), alg, use: 'sig', ...extra };
}

/** Collects a file's vectors and the keys they name; ids must be unique. */
export class VectorFileBuilder {
  private readonly keys: Record<string, KeyInput> = {};
  private readonly vectors: Vector[] = [];

  constructor(
    private readonly kind: VectorFile['kind'],
    private readonly description: string,
  ) {}

  key(name: string, input: KeyInput): string {
    const known = this.keys[name];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(input)) {
      throw new Error(`key ${name} is defined twice, differently`);
    }
    this.keys[name] = input;
    return name;
  }

  /** The key's PEM, named `<key name>.pem`. */
  pem(key: TestKey): string {
    return this.key(`${key.name}.pem`, { pem: key.pem });
  }

  /** The key as one published JWK, named `<key name>.jwk`. */
  jwk(key: TestKey): string {
    return this.key(`${key.name}.jwk`, { jwk: publishedJwk(key) });
  }

  add(vector: Vector): void {
    if (this.vectors.some((known) => known.id === vector.id))
      throw new Error(`duplicate vector ${vector.id}`);
    this.vectors.push(vector);
  }

  build(): VectorFile {
    const keys = Object.fromEntries(Object.entries(this.keys).sort(([a], [b]) => (a < b ? -1 : 1)));
    return { kind: this.kind, description: this.description, keys, vectors: this.vectors };
  }
}

/** ISO 8601 as JavaScript's Date#toISOString writes it (always milliseconds, `Z`). */
export const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();
