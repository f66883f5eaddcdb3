import { describeNewKey, KEYS_HELP, parseKeys } from './keys';

describe('parseKeys', () => {
  it('makes an admin key named after its scopes unless told otherwise', () => {
    expect(parseKeys(['create', '--org', ' Acme '])).toEqual({
      kind: 'keys-create',
      org: 'Acme',
      name: 'admin (cli)',
      scopes: ['admin'],
    });
  });

  it('takes the options in any order, drops repeated scopes and cuts the name at 100 characters', () => {
    expect(
      parseKeys(['create', '--name', 'k'.repeat(120), '--scopes', 'read, client,read', '--org', 'Acme']),
    ).toEqual({ kind: 'keys-create', org: 'Acme', name: 'k'.repeat(100), scopes: ['read', 'client'] });
  });

  it('refuses a missing --org, an unknown scope, an unknown option or an option without a value', () => {
    const refusal = (args: string[]) => {
      const answer = parseKeys(['create', ...args]);
      expect(answer).toMatchObject({ kind: 'usage', text: KEYS_HELP.create });
      return 'message' in answer ? answer.message : undefined;
    };
    expect(refusal([])).toBe('--org is required');
    expect(refusal(['--org', '  '])).toBe('--org is required');
    expect(refusal(['--org', 'Acme', '--scopes', 'admin,root'])).toBe('unknown scope "root"');
    expect(refusal(['--org', 'Acme', '--force', 'yes'])).toBe('unexpected argument "--force"');
    expect(refusal(['--org'])).toBe('unexpected argument "--org"');
  });
});

describe('describeNewKey', () => {
  it('prints the key alone on the last line, after its name, scopes and organization', () => {
    expect(
      describeNewKey(
        { id: 'org-1', name: 'Acme' },
        { name: 'kiosk', scopes: ['read', 'client'], key: 'lk_x' },
      ),
    ).toBe(
      'New API key "kiosk" (read, client) of organization "Acme" (org-1), shown only this once:\nlk_x\n',
    );
  });
});
