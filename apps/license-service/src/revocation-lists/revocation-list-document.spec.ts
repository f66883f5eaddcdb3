import { revocationDocument } from './revocation-list-document';

describe('revocationDocument', () => {
  const issuedAt = new Date('2030-01-01T00:00:00.000Z');
  const at = new Date('2029-12-31T12:00:00.000Z');
  const base = { productId: 'p-1', version: 7, issuedAt, nextUpdateSeconds: 3600 };

  it('is a full list of the licenses that are not active, with next_update after issued_at', () => {
    expect(
      revocationDocument({
        ...base,
        licenses: [
          { serial: 'LIC-A', status: 'revoked', changedAt: at },
          { serial: 'LIC-B', status: 'suspended', changedAt: at },
        ],
      }),
    ).toEqual({
      typ: 'licensing-revocation-list+jwt',
      payload: {
        product_id: 'p-1',
        version: 7,
        issued_at: '2030-01-01T00:00:00.000Z',
        next_update: '2030-01-01T01:00:00.000Z',
        entries: [
          { serial: 'LIC-A', status: 'revoked', at: at.toISOString() },
          { serial: 'LIC-B', status: 'suspended', at: at.toISOString() },
        ],
      },
    });
  });

  it('is a delta when given since: active licenses are removed, the others entries', () => {
    const { typ, payload } = revocationDocument({
      ...base,
      since: 5,
      licenses: [
        { serial: 'LIC-A', status: 'active', changedAt: at },
        { serial: 'LIC-C', status: 'expired', changedAt: at },
      ],
    });
    expect(typ).toBe('licensing-revocation-delta+jwt');
    expect(payload).toMatchObject({
      since: 5,
      version: 7,
      entries: [{ serial: 'LIC-C', status: 'expired', at: at.toISOString() }],
      removed: [{ serial: 'LIC-A', at: at.toISOString() }],
    });
  });

  it('refuses an active license in a full list', () => {
    expect(() =>
      revocationDocument({ ...base, licenses: [{ serial: 'LIC-A', status: 'active', changedAt: at }] }),
    ).toThrow(/not active/);
  });
});
