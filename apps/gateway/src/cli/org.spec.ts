import { describeCreatedOrganization, describeLimits, ORG_HELP, parseOrg } from './org';

describe('parseOrg', () => {
  it('creates an organization of the trimmed name', () => {
    expect(parseOrg(['create', '  Acme Corp '])).toEqual({ kind: 'org-create', name: 'Acme Corp' });
  });

  it('refuses a blank name, a name over 255 characters, or a second argument', () => {
    for (const args of [
      ['create'],
      ['create', '  '],
      ['create', 'x'.repeat(256)],
      ['create', 'Acme', 'Corp'],
    ]) {
      expect(parseOrg(args)).toEqual({ kind: 'usage', text: ORG_HELP.create });
    }
    expect(parseOrg(['create', 'x'.repeat(255)])).toMatchObject({ kind: 'org-create' });
  });

  it('shows the limits without changes, and parses changes into limits or defaults', () => {
    expect(parseOrg(['limits', 'Acme'])).toEqual({ kind: 'org-limits', name: 'Acme', changes: new Map() });
    expect(parseOrg(['limits', 'Acme', 'client=900000/1m', 'activations=default'])).toEqual({
      kind: 'org-limits',
      name: 'Acme',
      changes: new Map([
        ['client', { limit: 900000, window_seconds: 60 }],
        ['activations', null],
      ]),
    });
  });

  it('refuses a malformed limit, saying which one, with the usage of org limits', () => {
    const answer = parseOrg(['limits', 'Acme', 'client=lots']);
    expect(answer).toMatchObject({ kind: 'usage', text: ORG_HELP.limits });
    expect(answer).toHaveProperty('message', expect.stringContaining('"client=lots"'));
    expect(parseOrg(['limits'])).toEqual({ kind: 'usage', text: ORG_HELP.limits });
  });
});

describe('the output of org commands', () => {
  it('prints a created organization with its admin key alone on the last line', () => {
    const text = describeCreatedOrganization({ id: 'org-1', name: 'Acme', adminKey: { key: 'lk_secret' } });
    expect(text).toBe(
      'Created organization "Acme" (org-1).\nAdmin API key (shown only this once):\nlk_secret\n',
    );
  });

  it('prints one aligned line per limit, saying whose it is and what it counts', () => {
    const limit = (value: number, window_seconds = 60) => ({ limit: value, window_seconds });
    const text = describeLimits(
      {
        id: 'org-1',
        name: 'Acme',
        overrides: { client: limit(900000) },
        effective: {
          admin: limit(30000),
          read: limit(60000),
          client: limit(900000),
          activations: limit(120, 3600),
        },
      },
      30000,
    );
    expect(text.split('\n')).toEqual([
      'Rate limits of organization "Acme" (org-1):',
      '  admin           30000 per 60 s per API key (default)',
      '  read            60000 per 60 s per API key (default)',
      '  client         900000 per 60 s per API key (this organization)',
      '  activations       120 per 3600 s per license (default)',
      'Running gateways apply a change within 30000 ms (API_KEY_CACHE_TTL_MS).',
      '',
    ]);
  });
});
