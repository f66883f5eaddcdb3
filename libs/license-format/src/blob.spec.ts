import { blobFromJws, jwsFromBlob } from './blob';
import { MalformedJwsError } from './jws';

const token =
  'eyJhbGciOiJFZERTQSIsInR5cCI6ImxpY2Vuc2Urand0Iiwia2lkIjoiazEifQ.eyJzdWIiOiJMSUMtWC0wMDAwMDAwMDAwMDAwMDAwIn0.c2ln';

describe('license blob', () => {
  it('is the standard padded base64 of the JWS text', () => {
    expect(blobFromJws('ab.c')).toBe('YWIuYw==');
    expect(blobFromJws(token)).toBe(Buffer.from(token, 'utf8').toString('base64'));
  });

  it('round-trips a JWS', () => {
    expect(jwsFromBlob(blobFromJws(token))).toBe(token);
  });

  it('round-trips non-ASCII text byte for byte', () => {
    expect(jwsFromBlob(blobFromJws('é.ü.✓'))).toBe('é.ü.✓');
  });

  it('accepts a blob that was line-wrapped or padded with whitespace', () => {
    const blob = blobFromJws(token);
    const wrapped = `  ${blob.match(/.{1,64}/g)!.join('\r\n')}\n`;
    expect(jwsFromBlob(wrapped)).toBe(token);
  });

  it.each([
    ['an empty blob', ''],
    ['only whitespace', ' \n '],
    ['the base64url alphabet', 'YWIu-_=='],
    ['a character outside the alphabet', 'YWIu*w=='],
    ['missing padding', 'YWIuYw'],
    ['too much padding', 'YWIuYw==='],
    ['padding in the middle', 'YW==YWIu'],
    ['a length that is not a multiple of four', 'YWIuY'],
    ['non-zero padding bits', 'YWIuYx=='],
    ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x2e]).toString('base64')],
  ])('rejects %s', (_label, blob) => {
    expect(() => jwsFromBlob(blob)).toThrow(MalformedJwsError);
  });
});
