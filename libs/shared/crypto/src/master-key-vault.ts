import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

interface MasterKey {
  version: string;
  key: Buffer;
}

/** A sealed secret: the ciphertext (iv, tag, body) and the version of the master key that sealed it. */
export interface Sealed {
  ciphertext: Buffer;
  version: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts secrets at rest with AES-256-GCM under a master key from the environment: the license
 * service's signing keys (SIGNING_MASTER_KEYS) and the webhook service's endpoint secrets
 * (WEBHOOK_MASTER_KEYS). `spec` is `<version>:<base64 of 32 bytes>`, comma separated, newest
 * first: the newest seals, every listed key still opens what it sealed, so a new key can be
 * put first while older ciphertexts stay readable. The owner's id is bound in as associated data,
 * so a ciphertext copied onto another row does not decrypt.
 */
export class MasterKeyVault {
  private readonly keys: Map<string, Buffer>;
  private readonly current: MasterKey;

  /** `variable` names the setting in error messages. */
  constructor(
    spec: string,
    private readonly variable: string,
  ) {
    const keys = spec
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry): MasterKey => {
        const separator = entry.indexOf(':');
        const version = entry.slice(0, separator);
        const key = Buffer.from(entry.slice(separator + 1), 'base64');
        if (separator < 1 || key.length !== 32) {
          throw new Error(`${variable} entries must be "<version>:<base64 of 32 bytes>"`);
        }
        return { version, key };
      });
    if (keys.length === 0) throw new Error(`${variable} holds no key`);
    this.current = keys[0];
    this.keys = new Map(keys.map(({ version, key }) => [version, key]));
  }

  /** The version new secrets are sealed with: the first key of the setting. */
  get currentVersion(): string {
    return this.current.version;
  }

  /** The older versions this vault still opens: what a re-seal moves to the current one. */
  get olderVersions(): string[] {
    return [...this.keys.keys()].filter((version) => version !== this.current.version);
  }

  seal(ownerId: string, plaintext: string): Sealed {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(ownerId));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]), version: this.current.version };
  }

  open(ownerId: string, { ciphertext, version }: Sealed): string {
    const key = this.keys.get(version);
    if (!key) throw new Error(`Master key version "${version}" is not in ${this.variable}`);
    const decipher = createDecipheriv('aes-256-gcm', key, ciphertext.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(ownerId));
    decipher.setAuthTag(ciphertext.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(ciphertext.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}
