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
