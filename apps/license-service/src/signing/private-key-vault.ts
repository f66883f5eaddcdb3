import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

interface MasterKey {
  version: string;
  key: Buffer;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts signing keys at rest with AES-256-GCM under a master key from the environment. The
 * ciphertext records which master key sealed it, so a new key can be put first in
 * SIGNING_MASTER_KEYS while older ciphertexts stay readable; the key pair id is bound in as
 * associated data, so a ciphertext copied onto another row does not decrypt.
 */
export class PrivateKeyVault {
  private readonly keys: Map<string, Buffer>;
  private readonly current: MasterKey;

  constructor(spec: string) {
    const keys = spec
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry): MasterKey => {
        const separator = entry.indexOf(':');
        const version = entry.slice(0, separator);
        const key = Buffer.from(entry.slice(separator + 1), 'base64');
        if (separator < 1 || key.length !== 32) {
          throw new Error('SIGNING_MASTER_KEYS entries must be "<version>:<base64 of 32 bytes>"');
        }
        return { version, key };
      });
    if (keys.length === 0) throw new Error('SIGNING_MASTER_KEYS holds no key');
    this.current = keys[0];
    this.keys = new Map(keys.map(({ version, key }) => [version, key]));
  }

  seal(keyPairId: string, privateKeyPem: string): { ciphertext: Buffer; version: string } {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(keyPairId));
    const body = Buffer.concat([cipher.update(privateKeyPem, 'utf8'), cipher.final()]);
    return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]), version: this.current.version };
  }

  open(keyPairId: string, ciphertext: Buffer, version: string): string {
    const key = this.keys.get(version);
    if (!key) throw new Error(`Master key version "${version}" is not in SIGNING_MASTER_KEYS`);
    const decipher = createDecipheriv('aes-256-gcm', key, ciphertext.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(keyPairId));
    decipher.setAuthTag(ciphertext.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(ciphertext.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}
