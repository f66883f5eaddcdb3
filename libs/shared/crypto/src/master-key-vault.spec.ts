import { randomBytes } from 'node:crypto';
import { MasterKeyVault } from './master-key-vault';

const key = (version: string): string => `${version}:${randomBytes(32).toString('base64')}`;

describe('MasterKeyVault', () => {
  it('opens what it sealed, and only for the same owner', () => {
    const vault = new MasterKeyVault(key('v1'), 'TEST_KEYS');
    const sealed = vault.seal('owner-a', 'whsec_secret');
    expect(sealed.ciphertext.toString('utf8')).not.toContain('whsec_secret');
    expect(vault.open('owner-a', sealed)).toBe('whsec_secret');
    expect(() => vault.open('owner-b', sealed)).toThrow();
  });

  it('seals with the newest key and still opens with an older one', () => {
    const old = key('v1');
    const sealedBefore = new MasterKeyVault(old, 'TEST_KEYS').seal('o', 's');
    const rotated = new MasterKeyVault(`${key('v2')},${old}`, 'TEST_KEYS');
    expect(rotated.open('o', sealedBefore)).toBe('s');
    expect(rotated.seal('o', 's').version).toBe('v2');
    expect([rotated.currentVersion, rotated.olderVersions]).toEqual(['v2', ['v1']]);
    expect(new MasterKeyVault(old, 'TEST_KEYS').olderVersions).toEqual([]);
  });

  it('names the variable when a key is malformed or unknown', () => {
    expect(() => new MasterKeyVault('v1:short', 'TEST_KEYS')).toThrow(/TEST_KEYS/);
    const sealed = new MasterKeyVault(key('v9'), 'TEST_KEYS').seal('o', 's');
    expect(() => new MasterKeyVault(key('v1'), 'TEST_KEYS').open('o', sealed)).toThrow(/v9.*TEST_KEYS/);
  });
});
