import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface JoseVerification {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  error?: string;
}

// jose is ESM-only and jest here runs CommonJS, so jose runs in a plain Node process — exactly as
// a customer's application would run it, with nothing of ours loaded.
const SCRIPT = `
import { importSPKI, jwtVerify } from 'jose';
const { token, pem, alg } = JSON.parse(process.argv[1]);
try {
  const key = await importSPKI(pem, alg);
  const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: [alg], typ: 'license+jwt' });
  process.stdout.write(JSON.stringify({ header: protectedHeader, claims: payload }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error.code ?? error) }));
}
`;

/** Verifies a compact JWS with the `jose` library and a PEM public key, pinned to `alg`. */
export async function verifyWithJose(token: string, pem: string, alg: string): Promise<JoseVerification> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', SCRIPT, JSON.stringify({ token, pem, alg })],
    { cwd: __dirname },
  );
  return JSON.parse(stdout) as JoseVerification;
}

const COMPACT_SCRIPT = `
import { compactVerify, importSPKI } from 'jose';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { tokens, pem, alg } = JSON.parse(input);
const key = await importSPKI(pem, alg);
const results = [];
for (const token of tokens) {
  try {
    await compactVerify(token, key, { algorithms: [alg] });
    results.push(null);
  } catch (error) {
    results.push(String(error.code ?? error.name ?? error));
  }
}
process.stdout.write(JSON.stringify(results));
`;

/**
 * Checks many compact JWS at once with `jose`'s compactVerify, the way an offline verifier
 * would: the product's PEM public key and the one algorithm pinned. Answers, per token, null when
 * jose accepted it, or the error code with which it refused it.
 */
export async function compactVerifyWithJose(
  tokens: string[],
  pem: string,
  alg: string,
): Promise<(string | null)[]> {
  // The tokens go through stdin: an RSA-3072 token is 1 kB, and one argv string is capped at 128 kB.
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', COMPACT_SCRIPT],
      { cwd: __dirname, maxBuffer: 16 * 1024 * 1024 },
      (error, out) => (error ? reject(error) : resolve(out)),
    );
    child.stdin!.end(JSON.stringify({ tokens, pem, alg }));
  });
  return JSON.parse(stdout) as (string | null)[];
}

const DETACHED_SCRIPT = `
import { createLocalJWKSet, flattenedVerify } from 'jose';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { answers, jwks } = JSON.parse(input);
const keys = createLocalJWKSet(jwks);
const results = [];
for (const { signature, body } of answers) {
  // RFC 7515 Appendix F: the detached payload is put back as the base64url of the body's bytes.
  const [protectedHeader, , sig] = signature.split('.');
  const payload = Buffer.from(body, 'utf8').toString('base64url');
  try {
    const verified = await flattenedVerify({ protected: protectedHeader, payload, signature: sig }, keys, {
      algorithms: ['EdDSA'],
    });
    results.push({ header: verified.protectedHeader });
  } catch (error) {
    results.push({ error: String(error.code ?? error.name ?? error) });
  }
}
process.stdout.write(JSON.stringify(results));
`;

/**
 * Checks signed answers (a `Licensing-Signature`, a JWS with detached payload, and the body it
 * signs) with `jose`'s flattenedVerify and a JWK Set, as a client using any JOSE library would.
 * Answers, per answer, the verified protected header or jose's error code.
 */
export async function verifyDetachedWithJose(
  answers: { signature: string; body: string }[],
  jwks: unknown,
): Promise<JoseVerification[]> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', DETACHED_SCRIPT],
      { cwd: __dirname, maxBuffer: 16 * 1024 * 1024 },
      (error, out) => (error ? reject(error) : resolve(out)),
    );
    child.stdin!.end(JSON.stringify({ answers, jwks }));
  });
  return JSON.parse(stdout) as JoseVerification[];
}
