import { generateKeyPairSync, verify } from 'node:crypto';
import { DomainError } from '@licensing/shared/errors';
import { nonceOf, signAnswer } from './signed-answer';

describe('signed answers', () => {
  describe('nonceOf', () => {
    it.each(['12345678', 'a'.repeat(128), '0b6a2f4e-5c1d-4e8f-9a7b-3c2d1e0f9a8b', 'q3_X-~.+/=AbCdEf'])(
      'takes %p',
      (nonce) => expect(nonceOf(nonce)).toBe(nonce),
    );

    it('is undefined when the request sent none', () => {
      expect(nonceOf(undefined)).toBeUndefined();
    });

    it.each([['1234567'], ['a'.repeat(129)], ['with space'], ['quote"quote'], ['newline\nx'], [['a', 'b']]])(
      'refuses %p with a validation error',
      (nonce) => {
        expect(() => nonceOf(nonce as string)).toThrow(DomainError);
      },
    );
  });

  it('signs the body bytes as a detached JWS whose header binds the nonce and the time', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const body = JSON.stringify({ status: 'ok', note: 'é ✓' });
    const signature = signAnswer(body, { kid: 'k-1', privateKey }, 'nonce-123', new Date(1_900_000_000_500));
    const [header, payload, sig] = signature.split('.') as [string, string, string];
    expect(payload).toBe('');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
      alg: 'EdDSA',
      typ: 'licensing-answer+jws',
      kid: 'k-1',
      nonce: 'nonce-123',
      iat: 1_900_000_000,
    });
    const signingInput = (text: string) =>
      Buffer.from(`${header}.${Buffer.from(text).toString('base64url')}`);
    expect(verify(null, signingInput(body), publicKey, Buffer.from(sig, 'base64url'))).toBe(true);
    expect(
      verify(null, signingInput(body.replace('ok', 'ko')), publicKey, Buffer.from(sig, 'base64url')),
    ).toBe(false);
  });
});
