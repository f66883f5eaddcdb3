// The Go SDK (sdks/go), run from jest so that `npm test` covers it. The toolchain is installed when
// it is missing (scripts/ensure-toolchain.sh), then `go vet` and `go test` must pass: go test runs
// every conformance vector and a seeded fuzz pass. Last, mutated documents and keys go through both
// the Go SDK and the JavaScript SDK, which must answer the same verdicts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  importPublicKey,
  InvalidPublicKeyError,
  verifyActivationFile,
  verifyLicense,
  verifyRevocationList,
  verifySignedAnswer,
  type PublicKeyInput,
  type RevocationList,
} from '@licensing/license-verifier';
import { readVectorFiles } from '../conformance/src/generate';
import type { VectorFile } from '../conformance/src/vector-file';

const run = promisify(execFile);
const GO_DIR = __dirname;

// The Go caches live outside the repository, kept between runs so that a second run compiles
// nothing. Nothing is fetched: the module uses the standard library only.
const GO_HOME = join(tmpdir(), 'licensing-go-sdk');
const env = {
  ...process.env,
  GOCACHE: join(GO_HOME, 'cache'),
  GOPATH: join(GO_HOME, 'path'),
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOTOOLCHAIN: 'local',
  GOTELEMETRY: 'off',
  CGO_ENABLED: '0',
};

/** Runs a command in sdks/go; a failure carries the command's whole output. */
async function go(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout, stderr } = await run('go', args, {
      cwd: GO_DIR,
      env: { ...env, ...extraEnv },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`go ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

describe('the Go SDK', () => {
  beforeAll(async () => {
    await run('sh', [join(GO_DIR, 'scripts/ensure-toolchain.sh')], { env });
  }, 600_000);

  it('passes go vet', async () => {
    await go(['vet', './...']);
  }, 300_000);

  // The same run of go test writes the Go verdicts that the comparison below reads: one build and
  // one run of the test binary.
  const dir = mkdtempSync(join(tmpdir(), 'go-sdk-compare-'));
  const dump = join(dir, 'verdicts.json');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes go test: every conformance vector, and the fuzz pass', async () => {
    const output = await go(['test', '-count=1', './...'], { LICENSING_COMPARE_DUMP: dump });
    expect(output).toMatch(/^ok\s/m);
  }, 300_000);

  describe('answers as the JavaScript SDK does on mutated inputs', () => {
    let verdicts: Dump;

    beforeAll(() => {
      verdicts = JSON.parse(readFileSync(dump, 'utf8')) as Dump;
    });

    it('on documents', async () => {
      // The README lets other SDKs read only ISO 8601 dates; JavaScript's Date.parse reads more.
      // Here it reads only those, so that both SDKs read the same dates.
      const parse = Date.parse.bind(Date);
      const spy = jest.spyOn(Date, 'parse').mockImplementation((s) => (ISO_DATE.test(s) ? parse(s) : NaN));
      try {
        const differences: unknown[] = [];
        for (const document of verdicts.documents) {
          const javascript = await verdictOf(document);
          const golang = JSON.parse(JSON.stringify(goVerdict(document.verdict))) as unknown;
          if (!isDeepStrictEqual(javascript, golang)) {
            differences.push({
              vector: document.vector,
              text: text(document.text_base64),
              javascript,
              golang,
            });
          }
        }
        expect({ compared: verdicts.documents.length, differences: differences.slice(0, 5) }).toEqual({
          compared: verdicts.documents.length,
          differences: [],
        });
        expect(verdicts.documents.length).toBeGreaterThan(0);
      } finally {
        spy.mockRestore();
      }
    }, 120_000);

    it('on keys', async () => {
      const differences: unknown[] = [];
      let compared = 0;
      for (const key of verdicts.keys) {
        const bytes = Buffer.from(key.text_base64, 'base64');
        // Go refuses a key whose JSON is not UTF-8; JavaScript receives keys already decoded.
        if (!Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)) continue;
        // Go refuses RSA keys its crypto/rsa cannot use (README, "Where Go differs").
        if (key.reason?.startsWith('unusable RSA key')) continue;
        compared++;
        const javascript = await keyVerdict(bytes.toString('utf8'));
        const golang = key.accepted ? { accepted: true, keys: key.keys } : { accepted: false };
        if (!isDeepStrictEqual(javascript, golang))
          differences.push({ text: bytes.toString('utf8'), javascript, golang });
      }
      expect({ compared, differences: differences.slice(0, 5) }).toEqual({ compared, differences: [] });
      expect(compared).toBeGreaterThan(0);
    }, 120_000);
  });
});

/** The dates both SDKs read: ECMAScript's date time string format, with Z or ±HH:mm. */
const ISO_DATE =
  /^(?:\d{4}|[+-]\d{6})(?:-\d{2}(?:-\d{2})?)?(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?|Z)?$/;

interface Dump {
  documents: DumpedDocument[];
  keys: { text_base64: string; accepted: boolean; reason?: string; keys?: unknown[] }[];
}

interface DumpedDocument {
  kind: Exclude<VectorFile['kind'], 'public-key'>;
  file: string;
  key: string;
  vector: string;
  text_base64: string | null;
  body_base64: string | null;
  nonce: string;
  options: Record<string, unknown>;
  verdict: { valid: boolean; errors: { code: string }[]; document: unknown };
}

const files = Object.fromEntries(
  Object.entries(readVectorFiles()).map(([name, content]) => [name, JSON.parse(content) as VectorFile]),
);

const bytesOf = (base64: string | null): Buffer => Buffer.from(base64 ?? '', 'base64');
const text = (base64: string | null): string => bytesOf(base64).toString('utf8');
const ms = (seconds: unknown): number | undefined =>
  seconds === undefined ? undefined : (seconds as number) * 1000;

function keyOf(file: string, name: string): PublicKeyInput {
  const input = files[file]?.keys[name];
  if (input === undefined) throw new Error(`no key ${name} in ${file}`);
  if ('pem' in input) return input.pem;
  if ('jwk' in input) return input.jwk as PublicKeyInput;
  return input.jwks as PublicKeyInput;
}

const goVerdict = ({ valid, errors, document }: DumpedDocument['verdict']) => ({
  valid,
  errors: errors.map((e) => e.code),
  document,
});

/** What the JavaScript SDK answers, in the shape of the Go dump's verdict. */
async function verdictOf(d: DumpedDocument): Promise<unknown> {
  const key = keyOf(d.file, d.key);
  const o = d.options;
  const codes = (errors: { code: string }[]) => errors.map((e) => e.code);
  let verdict: { valid: boolean; errors: string[]; document: unknown };
  switch (d.kind) {
    case 'license': {
      const r = await verifyLicense(new Uint8Array(bytesOf(d.text_base64)), key, {
        now: ms(o['now']),
        productId: o['product_id'] as string | undefined,
        fingerprint: o['fingerprint'] as string | undefined,
        clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
      });
      const license = r.license && (({ claims: _claims, ...summary }) => summary)(r.license);
      verdict = { valid: r.valid, errors: codes(r.errors), document: license };
      break;
    }
    case 'revocation-list': {
      const r = await verifyRevocationList(text(d.text_base64), key, {
        productId: o['product_id'] as string | undefined,
        previous: o['previous'] as RevocationList | undefined,
      });
      verdict = { valid: r.valid, errors: codes(r.errors), document: r.list };
      break;
    }
    case 'signed-answer': {
      const body = new Uint8Array(bytesOf(d.body_base64));
      const r = await verifySignedAnswer({ body, signature: text(d.text_base64), nonce: d.nonce }, key, {
        now: ms(o['now']),
        maxAgeSeconds: o['max_age_seconds'] as number | undefined,
        clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
      });
      verdict = { valid: r.valid, errors: codes(r.errors), document: r.signed_at };
      break;
    }
    case 'activation': {
      const r = await verifyActivationFile(text(d.text_base64), key, {
        now: ms(o['now']),
        nonce: o['nonce'] as string | undefined,
        machineKey: o['machine_key'] as Record<string, unknown> | undefined,
        fingerprint: o['fingerprint'] as string | undefined,
        productId: o['product_id'] as string | undefined,
        clockToleranceSeconds: o['clock_tolerance_seconds'] as number | undefined,
      });
      verdict = { valid: r.valid, errors: codes(r.errors), document: r.activation };
      break;
    }
    default:
      throw new Error(`unknown kind ${String(d.kind satisfies never)}`);
  }
  return JSON.parse(JSON.stringify(verdict)) as unknown;
}

/**
 * What the JavaScript SDK says of a key text: JSON text is read as a JWK or JWK Set (as Go's
 * ParsePublicKey reads text that starts with "{"), anything else as a PEM.
 */
async function keyVerdict(keyText: string): Promise<unknown> {
  let input: unknown = keyText;
  if (keyText.trim().startsWith('{')) {
    try {
      input = JSON.parse(keyText);
    } catch {
      return { accepted: false };
    }
  }
  try {
    await verifyLicense('', input as PublicKeyInput);
  } catch (error) {
    if (error instanceof InvalidPublicKeyError) return { accepted: false };
    throw error;
  }
  const list = (input as { keys?: unknown }).keys;
  const keys = await Promise.all(
    (Array.isArray(list) ? list : [input]).map((one) =>
      importPublicKey(one as Parameters<typeof importPublicKey>[0]),
    ),
  );
  return { accepted: true, keys: keys.map(({ type, alg, kid }) => ({ type, alg, kid: kid ?? null })) };
}

function isDeepStrictEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
