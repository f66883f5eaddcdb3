import { eventSubject, licenseEventsFilter, parseEventSubject } from './events';

const ORG = '0190b4a6-5a39-7d55-9d47-6bc7d35f7f53';

describe('parseEventSubject', () => {
  it('reads back what eventSubject builds', () => {
    expect(parseEventSubject(eventSubject(ORG, 'license.revoked'), '')).toEqual({
      orgId: ORG,
      type: 'license.revoked',
    });
  });

  it('reads a subject under its namespace, dotted or not', () => {
    const event = { orgId: ORG, type: 'product.created' };
    expect(parseEventSubject(`t1.licensing.events.${ORG}.product.created`, 't1')).toEqual(event);
    expect(parseEventSubject(`ci.run-7.licensing.events.${ORG}.product.created`, 'ci.run-7')).toEqual(event);
  });

  it('keeps a type it does not know, for consumers older than the type', () => {
    expect(parseEventSubject(`licensing.events.${ORG}.invoice.paid_late`, '')?.type).toBe(
      'invoice.paid_late',
    );
  });

  it.each([
    ['another namespace', `t2.licensing.events.${ORG}.license.revoked`, 't1'],
    ['a namespace that only starts like its own', `t10.licensing.events.${ORG}.license.revoked`, 't1'],
    ['no namespace where one is expected', `licensing.events.${ORG}.license.revoked`, 't1'],
    ['a namespace where none is expected', `t1.licensing.events.${ORG}.license.revoked`, ''],
    ['the prefix further in', `x.licensing.events.${ORG}.license.revoked`, ''],
    ['another stream', `licensing.audit.${ORG}`, ''],
    ['another stream with a look-alike prefix', `licensing.eventsx.${ORG}.license.revoked`, ''],
    ['no type', `licensing.events.${ORG}`, ''],
    ['an empty type', `licensing.events.${ORG}.`, ''],
    ['an empty organization', 'licensing.events..license.revoked', ''],
    ['an empty token in the type', `licensing.events.${ORG}.license..revoked`, ''],
    ['a wildcard organization', 'licensing.events.*.license.revoked', ''],
    ['a wildcard type', `licensing.events.${ORG}.>`, ''],
    ['whitespace in a token', `licensing.events.${ORG} x.license.revoked`, ''],
    ['an empty subject', '', ''],
  ])('refuses %s', (_case, subject, namespace) => {
    expect(parseEventSubject(subject, namespace)).toBeUndefined();
  });
});

describe('licenseEventsFilter', () => {
  it("matches one organization's license events, or every organization's with *", () => {
    expect(licenseEventsFilter(ORG)).toBe(`licensing.events.${ORG}.license.>`);
    expect(licenseEventsFilter('*')).toBe('licensing.events.*.license.>');
  });
});
