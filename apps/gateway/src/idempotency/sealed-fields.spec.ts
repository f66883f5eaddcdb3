import { sealFields, unsealFields } from './sealed-fields';

describe('sealed members of a stored answer', () => {
  const body = { id: 'k1', name: 'CI', key: 'lk_secret-value' };

  it('stores the named member encrypted, and leaves the others readable', () => {
    const stored = sealFields(body, ['key'], 'lk_caller', 'org:key') as Record<string, unknown>;
    expect(stored).toMatchObject({ id: 'k1', name: 'CI', key: { sealed: expect.any(String) } });
    expect(JSON.stringify(stored)).not.toContain('lk_secret-value');
    expect(body.key).toBe('lk_secret-value'); // the answer itself is untouched
  });

  it('opens with the same caller secret and context, member order kept', () => {
    const stored = sealFields(body, ['key'], 'lk_caller', 'org:key');
    const opened = unsealFields(stored, ['key'], 'lk_caller', 'org:key');
    expect(JSON.stringify(opened)).toBe(JSON.stringify(body));
  });

  it('does not open with another caller secret or another context', () => {
    const stored = sealFields(body, ['key'], 'lk_caller', 'org:key');
    expect(unsealFields(stored, ['key'], 'lk_other', 'org:key')).toBeUndefined();
    expect(unsealFields(stored, ['key'], 'lk_caller', 'org:other')).toBeUndefined();
  });

  it('leaves bodies without the member, and routes without secrets, as they are', () => {
    const problem = { status: 404, code: 'not_found' };
    expect(sealFields(problem, ['key'], 's', 'c')).toEqual(problem);
    expect(unsealFields(problem, ['key'], 's', 'c')).toEqual(problem);
    expect(sealFields(body, [], 's', 'c')).toBe(body);
  });
});
