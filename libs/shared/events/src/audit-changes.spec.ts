import { auditChanges } from './audit-changes';

describe('auditChanges', () => {
  it('lists only the fields whose value changed, as {from, to}', () => {
    expect(
      auditChanges(
        { name: 'Editor', code: 'editor', default_valid_days: 365 },
        { name: 'Editor Pro', code: 'editor', default_valid_days: 30 },
      ),
    ).toEqual({ name: { from: 'Editor', to: 'Editor Pro' }, default_valid_days: { from: 365, to: 30 } });
  });

  it('compares arrays and objects by value', () => {
    expect(
      auditChanges(
        { features: ['a', 'b'], hardware_binding: { fingerprint: 'm1' } },
        { features: ['a', 'b'], hardware_binding: { fingerprint: 'm1' } },
      ),
    ).toEqual({});
    expect(auditChanges({ features: ['a', 'b'] }, { features: ['b', 'a'] })).toEqual({
      features: { from: ['a', 'b'], to: ['b', 'a'] },
    });
    expect(auditChanges({ hardware_binding: null }, { hardware_binding: { fingerprint: 'm1' } })).toEqual({
      hardware_binding: { from: null, to: { fingerprint: 'm1' } },
    });
  });

  it('describes a creation as every field set, from null, and a deletion as every field, to null', () => {
    expect(auditChanges(null, { name: 'Editor', description: '', key_pair_id: null })).toEqual({
      name: { from: null, to: 'Editor' },
      description: { from: null, to: '' },
    });
    expect(auditChanges({ name: 'Editor', features: [] }, null)).toEqual({
      name: { from: 'Editor', to: null },
      features: { from: [], to: null },
    });
  });

  it('treats a field that appears or disappears as null on the other side', () => {
    expect(auditChanges({ a: 1 }, { b: 2 })).toEqual({ a: { from: 1, to: null }, b: { from: null, to: 2 } });
    expect(auditChanges({ a: undefined }, { a: null })).toEqual({});
  });

  it('leaves out id and timestamps, which the entry states itself', () => {
    expect(
      auditChanges(
        { id: 'x', created_at: '2026-01-01', updated_at: '2026-01-01', name: 'a' },
        { id: 'x', created_at: '2026-01-01', updated_at: '2026-02-02', name: 'a' },
      ),
    ).toEqual({});
  });

  it('never copies secrets or signed material, even when a caller passes them', () => {
    const secretive = {
      license_blob: 'ZXlK...',
      jws: 'eyJ...',
      key: 'lk_secret',
      key_hash: 'abc',
      secret: 'whsec_x',
      private_key: '-----BEGIN PRIVATE KEY-----',
      private_key_ciphertext: 'sealed',
      name: 'kept',
    };
    expect(auditChanges(null, secretive)).toEqual({ name: { from: null, to: 'kept' } });
    expect(auditChanges(secretive, null)).toEqual({ name: { from: 'kept', to: null } });
  });
});
