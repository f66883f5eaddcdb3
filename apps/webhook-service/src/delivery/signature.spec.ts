import { createHmac } from 'node:crypto';
import { generateSecret, signatureHeader } from './signature';

describe('signatureHeader', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the whole secret>', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const body = '{"id":"e1"}';
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    expect(signatureHeader([secret], 1_700_000_000, body)).toBe(`t=1700000000,v1=${expected}`);
  });

  it('carries one v1= per valid secret, the newest first', () => {
    const header = signatureHeader(['whsec_new', 'whsec_old'], 1, 'b');
    const sign = (secret: string) => createHmac('sha256', secret).update('1.b').digest('hex');
    expect(header).toBe(`t=1,v1=${sign('whsec_new')},v1=${sign('whsec_old')}`);
  });
});
