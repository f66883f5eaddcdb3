import { randomBytes, randomUUID } from 'node:crypto';
import { PrivateKeyVault } from './private-key-vault';

const keySpec = (version: string) => `${version}:${randomBytes(32).toString('base64')}`;

describe('PrivateKeyVault', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+...\n-----END PRIVATE KEY-----\n';

  it('opens what it sealed, and the ciphertext does not contain the key', () => {
    const vault = new PrivateKeyVault(keySpec('v1'));
    const id = randomUUID();
    const { ciphertext, version } = vault.seal(id, pem);
    expect(version).toBe('v1');
    expect(ciphertext.toString('latin1')).not.toContain('PRIVATE KEY');
    expect(vault.open(id, ciphertext, version)).toBe(pem);
  });

  it('keeps older ciphertexts readable after a new master key is put first', () => {
    const v1 = keySpec('v1');
    const id = randomUUID();
    const sealed = new PrivateKeyVault(v1).seal(id, pem);
    const rotated = new PrivateKeyVault(`${keySpec('v2')},${v1}`);
    expect(rotated.open(id, sealed.ciphertext, sealed.version)).toBe(pem);
    expect(rotated.seal(id, pem).version).toBe('v2');
  });

  it('refuses a ciphertext moved to another key pair, or tampered with', () => {
    const vault = new PrivateKeyVault(keySpec('v1'));
    const { ciphertext, version } = vault.seal(randomUUID(), pem);
    expect(() => vault.open(randomUUID(), ciphertext, version)).toThrow();
    const tampered = Buffer.from(ciphertext);
    tampered[tampered.length - 1] ^= 1;
    expect(() => vault.open(randomUUID(), tampered, version)).toThrow();
  });

  it('rejects malformed master key settings', () => {
    expect(() => new PrivateKeyVault('')).toThrow(/holds no key/);
    expect(() => new PrivateKeyVault('v1:c2hvcnQ=')).toThrow(/32 bytes/);
  });
});
