import { DestinationRefused, checkUrl, isPublicAddress, resolveDestination } from './destination';

const deny = { allowPrivateNetworks: false };

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('checkUrl', () => {
  it.each([
    ['ftp://example.com/x', 'only http and https'],
    ['file:///etc/passwd', 'only http and https'],
    ['http://example.com/x', 'https'],
    ['https://user:pass@example.com/x', 'credentials'],
    ['not a url', 'not valid'],
  ])('refuses %s', (url, reason) => {
    expect(() => checkUrl(url, deny)).toThrow(reason);
  });

  it('takes plain http where private networks are allowed', () => {
    expect(checkUrl('http://localhost:8080/hook', { allowPrivateNetworks: true }).port).toBe('8080');
  });
});

describe('resolveDestination', () => {
  const resolver = (answers: Record<string, string[]>) => async (host: string) => {
    const addresses = answers[host];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('refuses a host name that resolves to a loopback address, and one private answer among public ones', async () => {
    const resolve = resolver({ 'evil.test': ['127.0.0.1'], 'mixed.test': ['93.184.216.34', '10.1.1.1'] });
    for (const host of ['evil.test', 'mixed.test']) {
      await expect(resolveDestination(`https://${host}/hook`, { ...deny, resolve })).rejects.toMatchObject({
        reason: 'address',
      });
    }
  });

  it('refuses literal private addresses without asking DNS', async () => {
    const resolve = jest.fn();
    for (const url of [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest/meta-data',
    ]) {
      await expect(resolveDestination(url, { ...deny, resolve })).rejects.toBeInstanceOf(DestinationRefused);
    }
    expect(resolve).not.toHaveBeenCalled();
  });

  it('answers the checked address to pin the connection to', async () => {
    const resolve = resolver({ 'hooks.example.test': ['93.184.216.34'] });
    await expect(
      resolveDestination('https://hooks.example.test/x', { ...deny, resolve }),
    ).resolves.toMatchObject({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('tells a host that does not resolve apart from a refused one', async () => {
    await expect(
      resolveDestination('https://nowhere.test/x', { ...deny, resolve: resolver({}) }),
    ).rejects.toMatchObject({ reason: 'dns' });
  });
});
