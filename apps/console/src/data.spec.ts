import {
  base64Bytes,
  checkoutTtl,
  dailyUsageSeries,
  durationInput,
  expiryInstant,
  formatDays,
  licenseChanges,
  licenseEdit,
  localDateTime,
  pageInfo,
  parseRelayRequest,
  problemFields,
  problemMessage,
  queryString,
  relayFileBody,
  timeRange,
  topShares,
  usageSeries,
  wordList,
} from './data';

describe('problemMessage', () => {
  it("shows the problem's detail, and each invalid field", () => {
    expect(problemMessage(404, { status: 404, code: 'not_found', detail: 'License 42 not found' })).toBe(
      'License 42 not found',
    );
    expect(
      problemMessage(400, {
        detail: 'The request is invalid',
        errors: [
          { field: 'code', message: 'code must be letters and digits' },
          { field: 'name', message: 'name is required' },
        ],
      }),
    ).toBe('The request is invalid (code: code must be letters and digits; name: name is required)');
  });

  it('says what to do about a refused key, and a forbidden operation', () => {
    expect(problemMessage(401, { detail: 'The API key is unknown or has been revoked' })).toBe(
      'This API key was refused: The API key is unknown or has been revoked. Sign in again with a valid key.',
    );
    expect(
      problemMessage(403, { detail: "This API key's scopes (read) do not allow this operation" }),
    ).toMatch(/^Not allowed with this API key: /);
  });

  it('falls back on the title, then the status, for a body that is no problem', () => {
    expect(problemMessage(409, { title: 'Conflict' })).toBe('Conflict');
    expect(problemMessage(502, undefined)).toBe('The API answered 502');
    expect(problemMessage(500, 'oops')).toBe('The API answered 500');
  });
});

describe('pageInfo', () => {
  it('places a page within the total', () => {
    expect(pageInfo(1, 20, 45)).toEqual({
      page: 1,
      pages: 3,
      first: 1,
      last: 20,
      hasPrevious: false,
      hasNext: true,
    });
    expect(pageInfo(3, 20, 45)).toEqual({
      page: 3,
      pages: 3,
      first: 41,
      last: 45,
      hasPrevious: true,
      hasNext: false,
    });
    expect(pageInfo(2, 20, 40)).toMatchObject({ pages: 2, first: 21, last: 40, hasNext: false });
  });

  it('reads an empty list as one empty page, and a page past the end as the end', () => {
    expect(pageInfo(1, 20, 0)).toEqual({
      page: 1,
      pages: 1,
      first: 0,
      last: 0,
      hasPrevious: false,
      hasNext: false,
    });
    expect(pageInfo(5, 20, 45)).toMatchObject({ first: 45, last: 45, hasPrevious: true, hasNext: false });
  });
});

describe('queryString', () => {
  it('keeps the non-empty values, encoded', () => {
    expect(queryString({ serial: '', customer_email: 'a+b@example.com', page: 2, status: undefined })).toBe(
      '?customer_email=a%2Bb%40example.com&page=2',
    );
    expect(queryString({ serial: '' })).toBe('');
  });
});

describe('timeRange', () => {
  const now = new Date('2030-05-10T13:45:00.000Z');

  it('ends with the current UTC hour for 24 h (hourly), the current UTC day otherwise (daily)', () => {
    expect(timeRange('24h', now)).toEqual({
      key: '24h',
      from: new Date('2030-05-09T14:00:00.000Z'),
      to: new Date('2030-05-10T14:00:00.000Z'),
      interval: 'hour',
    });
    expect(timeRange('7d', now)).toMatchObject({
      from: new Date('2030-05-04T00:00:00.000Z'),
      to: new Date('2030-05-11T00:00:00.000Z'),
      interval: 'day',
    });
    expect(timeRange('30d', now).from).toEqual(new Date('2030-04-11T00:00:00.000Z'));
  });
});

describe('usageSeries', () => {
  const range = timeRange('24h', new Date('2030-05-10T13:45:00.000Z'));
  const bucket = (at: string, syncs: number, licenses: number) => ({
    bucket: at,
    syncs,
    licenses,
    fingerprints: licenses,
    peak_seats_in_use: null,
  });

  it('fills every bucket of the range, zeros where the API listed none', () => {
    const { data, total } = usageSeries(
      [bucket('2030-05-09T14:00:00.000Z', 3, 2), bucket('2030-05-10T13:00:00.000Z', 5, 1)],
      range,
    );
    const [xs, syncs, licenses] = data;
    expect(xs).toHaveLength(24);
    expect(xs[0]).toBe(Date.parse('2030-05-09T14:00:00.000Z') / 1000);
    expect(xs[23]).toBe(Date.parse('2030-05-10T13:00:00.000Z') / 1000);
    expect(syncs).toEqual([3, ...Array(22).fill(0), 5]);
    expect(licenses).toEqual([2, ...Array(22).fill(0), 1]);
    expect(total).toBe(8);
  });

  it('leaves out buckets outside the range', () => {
    const { data, total } = usageSeries([bucket('2030-05-01T00:00:00.000Z', 9, 9)], range);
    expect(data[1]!.every((n) => n === 0)).toBe(true);
    expect(total).toBe(0);
  });
});

describe('dailyUsageSeries', () => {
  it('lays the API days on the last 30 UTC days, with zeros for days without a sync', () => {
    const now = new Date('2030-05-10T13:45:00.000Z');
    const [xs, syncs, machines] = dailyUsageSeries(
      [
        { day: '2029-01-01', syncs: 9, machines: 9 },
        { day: '2030-05-01', syncs: 4, machines: 2 },
        { day: '2030-05-10', syncs: 7, machines: 3 },
      ],
      now,
    );
    expect(xs).toHaveLength(30);
    expect(syncs!.at(-1)).toBe(7);
    expect(machines!.at(-1)).toBe(3);
    const first = xs.indexOf(Date.parse('2030-05-01T00:00:00.000Z') / 1000);
    expect([syncs![first], machines![first]]).toEqual([4, 2]);
    expect(syncs!.reduce((a, b) => a + b, 0)).toBe(11);
  });
});

describe('topShares', () => {
  it('ranks by count, keeps the first rows, and scales bars on the largest', () => {
    expect(topShares([{ count: 1 }, { count: 4 }, { count: 2 }], 2)).toEqual([
      { count: 4, share: 1 },
      { count: 2, share: 0.5 },
    ]);
    expect(topShares([{ count: 0 }])).toEqual([{ count: 0, share: 0 }]);
  });
});

describe('wordList', () => {
  it('splits on commas and spaces, without empties or repeats', () => {
    expect(wordList(' pro, export  pro,,sync ')).toEqual(['pro', 'export', 'sync']);
    expect(wordList('')).toEqual([]);
  });
});

describe('the checkout lifetime', () => {
  it('reads in days, with hours when not whole days', () => {
    expect(formatDays(2_592_000)).toBe('30 days');
    expect(formatDays(86_400)).toBe('1 day');
    expect(formatDays(129_600)).toBe('1.5 days (36 hours)');
    expect(formatDays(3_600)).toBe('0.04 days (1 hour)');
  });

  it('is edited in whole days when it is some, else in hours', () => {
    expect(durationInput(2_592_000)).toEqual({ amount: '30', unit: 'days' });
    expect(durationInput(129_600)).toEqual({ amount: '36', unit: 'hours' });
    expect(durationInput(5_400)).toEqual({ amount: '1.5', unit: 'hours' });
  });

  it('is 1 hour to 365 days, in whole seconds', () => {
    expect(checkoutTtl('30', 'days')).toEqual({ seconds: 2_592_000 });
    expect(checkoutTtl(' 1 ', 'hours')).toEqual({ seconds: 3_600 });
    expect(checkoutTtl('365', 'days')).toEqual({ seconds: 31_536_000 });
    expect(checkoutTtl('0.5', 'days')).toEqual({ seconds: 43_200 });
    for (const [amount, unit] of [
      ['366', 'days'],
      ['8761', 'hours'],
      ['0.5', 'hours'],
      ['0', 'days'],
      ['-1', 'days'],
    ] as const)
      expect(checkoutTtl(amount, unit)).toEqual({
        error: 'The lifetime must be between 1 hour and 365 days.',
      });
    expect(checkoutTtl('', 'days')).toEqual({ error: 'Enter a number of days or hours.' });
    expect(checkoutTtl('ten', 'days')).toEqual({ error: 'Enter a number of days or hours.' });
  });
});

describe('expiryInstant', () => {
  const now = new Date('2030-06-01T12:00:00.000Z');

  it('is none when empty, and the local time as an instant otherwise', () => {
    expect(expiryInstant('', now)).toEqual({});
    expect(expiryInstant('2031-01-01T09:30', now)).toEqual({
      iso: new Date('2031-01-01T09:30').toISOString(),
    });
  });

  it('refuses a time already past, and what is no date', () => {
    expect(expiryInstant('2029-01-01T00:00', now)).toEqual({ error: 'The expiry must be in the future.' });
    expect(expiryInstant('soon', now)).toEqual({ error: 'The expiry is not a date and time.' });
  });
});

describe('problemFields', () => {
  it("files each field's first message, a nested field also under its form field", () => {
    expect(
      problemFields({
        errors: [
          { field: 'features.1', message: 'each value must be shorter' },
          { field: 'valid_until', message: 'valid_until must not be before valid_from' },
          { field: 'valid_until', message: 'a second message' },
          { message: 'no field' },
        ],
      }),
    ).toEqual({
      'features.1': 'each value must be shorter',
      features: 'each value must be shorter',
      valid_until: 'valid_until must not be before valid_from',
    });
    expect(problemFields({ detail: 'no errors' })).toEqual({});
    expect(problemFields(undefined)).toEqual({});
  });
});

describe('license edits', () => {
  const license = {
    customer_email: 'ada@example.com',
    customer_id: null,
    valid_until: new Date('2031-01-01T09:30').toISOString(),
    max_seats: 2,
    features: ['pro', 'export'],
  };

  it('shows the end in local time, to the minute, and no end as empty', () => {
    expect(localDateTime(license.valid_until)).toBe('2031-01-01T09:30');
    expect(localDateTime(null)).toBe('');
    expect(licenseEdit(license)).toEqual({
      customer_email: 'ada@example.com',
      customer_id: '',
      valid_until: '2031-01-01T09:30',
      max_seats: '2',
      features: 'pro, export',
    });
  });

  it('sends only what changed; an emptied end or customer is null', () => {
    const form = licenseEdit(license);
    expect(licenseChanges(license, form)).toEqual({ changes: {} });
    expect(licenseChanges(license, { ...form, features: 'pro,export' })).toEqual({ changes: {} });
    expect(
      licenseChanges(license, {
        ...form,
        valid_until: '',
        customer_email: ' ',
        customer_id: 'CRM-1',
        max_seats: '5',
        features: 'pro',
      }),
    ).toEqual({
      changes: {
        valid_until: null,
        customer_email: null,
        customer_id: 'CRM-1',
        max_seats: 5,
        features: ['pro'],
      },
    });
    expect(licenseChanges(license, { ...form, valid_until: '2032-02-03T04:05' })).toEqual({
      changes: { valid_until: new Date('2032-02-03T04:05').toISOString() },
    });
  });

  it('refuses seats that are no whole number of at least 1, at the field', () => {
    const form = licenseEdit(license);
    for (const seats of ['0', '1.5', 'many', ''])
      expect(licenseChanges(license, { ...form, max_seats: seats })).toEqual({
        errors: { max_seats: 'Enter a whole number of seats, 1 or more.' },
      });
  });
});

describe('relay files', () => {
  const PEM =
    '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAq83vEvZ3m4ETyRXR7bZKmYv9yLd9m1z6uD9CzHAbzWU=\n-----END PUBLIC KEY-----\n';
  const form = { request: '', site: '', public_key: '', ttl: '', unit: 'days' as const };

  it("reads a relay request's site and public key, and says why a text is not one", () => {
    const request = JSON.stringify({ v: 1, kind: 'relay_request', site: 'Plant 4', public_key: PEM });
    expect(parseRelayRequest(request)).toEqual({ site: 'Plant 4', public_key: PEM });
    expect(parseRelayRequest(JSON.stringify({ site: 'Plant 4', public_key: PEM }))).toEqual({
      site: 'Plant 4',
      public_key: PEM,
    });
    expect(parseRelayRequest('{"site": "Plant 4"')).toEqual({
      error: 'The relay request is not JSON. Paste the whole file licensing-relay init wrote.',
    });
    for (const other of [
      'null',
      '[]',
      '"text"',
      JSON.stringify({ site: 'Plant 4' }),
      JSON.stringify({ kind: 'activation', site: 'a', public_key: PEM }),
    ])
      expect(parseRelayRequest(other)).toEqual({
        error: 'This JSON is not a relay request: it needs a site and a public_key.',
      });
  });

  it('sends the site and the key, and a lifetime only when one is given', () => {
    expect(relayFileBody({ ...form, site: ' Plant 4 ', public_key: PEM })).toEqual({
      body: { site: 'Plant 4', public_key: PEM },
    });
    expect(relayFileBody({ ...form, site: 'Plant 4', public_key: PEM, ttl: '36', unit: 'hours' })).toEqual({
      body: { site: 'Plant 4', public_key: PEM, ttl_seconds: 129_600 },
    });
  });

  it('marks each field it refuses, under the name the API gives it', () => {
    expect(relayFileBody({ ...form, request: '{', ttl: '400' })).toEqual({
      errors: {
        request: 'The relay request is not JSON. Paste the whole file licensing-relay init wrote.',
        site: 'Enter the relay site, or paste the relay request.',
        public_key: "Paste the relay's public key (PEM), or its relay request.",
        ttl_seconds: 'The lifetime must be between 1 hour and 365 days.',
      },
    });
    expect(relayFileBody({ ...form, site: 'a', public_key: PEM, ttl: '0.5', unit: 'hours' })).toEqual({
      errors: { ttl_seconds: 'The lifetime must be between 1 hour and 365 days.' },
    });
  });

  it('decodes a base64 file to its bytes', () => {
    const text = 'eyJhbGciOiJFZERTQSJ9.e30.c2ln\n';
    expect(base64Bytes(btoa(text))).toEqual(new TextEncoder().encode(text));
    expect(base64Bytes(btoa('\u0000\u00ff'))).toEqual(new Uint8Array([0, 255]));
  });
});
