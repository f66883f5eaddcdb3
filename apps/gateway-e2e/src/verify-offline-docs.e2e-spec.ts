import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jwsAlgorithmFor } from '@licensing/license-format';
import { decodeBlob, segmentOf } from './support/fixtures';
import { ALGORITHMS, issueLicenseFiles, type IssuedFiles } from './support/license-files';
import { TestStack, startStack } from './support/stack';

const run = promisify(execFile);
const DOC = join(__dirname, '../../../docs/verify-offline.md');

/** A python3 that has PyJWT and cryptography: the machine's, or Debian's packages installed now. */
async function pythonWithPyJwt(): Promise<string> {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p);
  const works = async (python: string) =>
    run(python, ['-c', 'import jwt, cryptography']).then(
      () => true,
      () => false,
    );
  for (const python of candidates) if (await works(python)) return python;
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run(
      'apt-get',
      ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', 'python3-jwt', 'python3-cryptography'],
      {
        env,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  } catch (error) {
    throw new Error(
      `No python3 with PyJWT, and "apt-get install python3-jwt" failed: ${(error as Error).message}`,
    );
  }
  if (await works('/usr/bin/python3')) return '/usr/bin/python3';
  throw new Error('python3-jwt was installed but /usr/bin/python3 cannot import jwt');
}

/**
 * The Python snippet of docs/verify-offline.md, taken from the page as it is and run with PyJWT
 * against license files the running service issued: what the page promises a Python developer.
 */
describe('docs/verify-offline.md, the Python snippet', () => {
  let stack: TestStack;
  let python: string;
  const files: IssuedFiles[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'verify-offline-'));

  beforeAll(async () => {
    [python] = await Promise.all([
      pythonWithPyJwt(),
      (async () => {
        stack = await startStack();
        const org = await stack.newOrganization();
        files.push(...(await Promise.all(ALGORITHMS.map((a) => issueLicenseFiles(org.api, a)))));
      })(),
    ]);
  }, 600_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await stack?.close();
  });

  it('accepts the genuine files of every algorithm and refuses tampered, expired, forged and foreign ones', async () => {
    const snippet = /```python\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'))?.[1];
    expect(snippet).toContain('def verify_license(');

    const cases: {
      name: string;
      alg: string;
      path: string;
      pem: string;
      product_id: string;
      expected: string;
    }[] = [];
    for (const f of files) {
      const alg = jwsAlgorithmFor(f.algorithm);
      const { header, claims, segments } = decodeBlob(f.license.license_blob);
      const hs256Input = `${segmentOf({ ...header, alg: 'HS256' })}.${segmentOf({ ...claims, features: ['enterprise'] })}`;
      const tokens: [string, string, string?][] = [
        ['genuine', f.jws, `ok:${f.license.serial}`],
        [
          'tampered',
          `${segments[0]}.${segmentOf({ ...claims, features: ['enterprise'] })}.${segments[2]}`,
          'InvalidSignatureError',
        ],
        ['expired', f.expired, 'ExpiredSignatureError'],
        ['alg none', `${segmentOf({ ...header, alg: 'none' })}.${segments[1]}.`, 'InvalidAlgorithmError'],
        [
          'HS256 keyed with the PEM',
          `${hs256Input}.${createHmac('sha256', f.pem).update(hs256Input).digest('base64url')}`,
          'InvalidAlgorithmError',
        ],
        ['another product', f.otherJws, 'InvalidTokenError'],
      ];
      for (const [name, token, expected] of tokens) {
        const path = join(dir, `${f.algorithm}-${name.replace(/\W+/g, '-')}.lic`);
        writeFileSync(path, `${token}\n`);
        cases.push({
          name: `${alg} ${name}`,
          alg,
          path,
          pem: name === 'another product' ? f.otherPem : f.pem,
          product_id: f.product.id,
          expected: expected!,
        });
      }
      // The right file with another key of the same algorithm.
      cases.push({
        name: `${alg} wrong key`,
        alg,
        path: join(dir, `${f.algorithm}-genuine.lic`),
        pem: f.attacker.pem,
        product_id: f.product.id,
        expected: 'InvalidSignatureError',
      });
    }

    const harness = `${snippet}
import json, sys
results = []
for case in json.load(sys.stdin):
    ALGORITHM = case["alg"]
    try:
        results.append("ok:" + verify_license(case["path"], case["pem"], case["product_id"])["sub"])
    except Exception as error:
        results.append(type(error).__name__)
print(json.dumps(results))
`;
    writeFileSync(join(dir, 'verify.py'), harness);
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile(python, [join(dir, 'verify.py')], (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
      );
      child.stdin!.end(JSON.stringify(cases));
    });
    const results = JSON.parse(stdout) as string[];
    expect(cases.map((c, i) => ({ name: c.name, result: results[i] }))).toEqual(
      cases.map((c) => ({ name: c.name, result: c.expected })),
    );
  });
});
