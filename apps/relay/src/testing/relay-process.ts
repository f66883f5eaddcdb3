// A relay as a real process (`licensing-relay start`, from the sources) for the SDKs' relay
// clients' tests: a product key of the test's own, a relay file signed with it, and the relay's
// commands (a revocation import) run against the same data directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { initRelay } from '../relay';
import { runRelayCli } from '../relay-cli';
import {
  productFixture,
  relayFile,
  revocationList,
  tempDir,
  type ProductFixture,
  type RelayFileInput,
} from './relay-fixtures';

export { productFixture } from './relay-fixtures';

const ROOT = path.join(__dirname, '../../../..');

export interface RelayProcess {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  product: ProductFixture;
  serial: string;
  /** Imports a revocation list naming the relay's serial (while the relay runs). */
  revoke(): Promise<void>;
  /**
   * The command line that imports such a list, for a test in another language to run: `argv[0]`
   * is node, to be run in `cwd` with `env` added.
   */
  revokeCommand(): { argv: string[]; cwd: string; env: Record<string, string> };
  stop(): Promise<void>;
}

export interface RelayProcessOptions {
  /** The product whose key signs the relay file (default: a new one). */
  product?: ProductFixture;
  /** Overrides of the relay file's claims (seats, expiry, product id...). */
  file?: Partial<Omit<RelayFileInput, 'relayPublicKey' | 'site'>>;
  site?: string;
}

/** Creates a relay, issues it a relay file and starts it on a free port. */
export async function startRelayProcess(options: RelayProcessOptions = {}): Promise<RelayProcess> {
  const { dir, remove } = tempDir();
  const product = options.product ?? (await productFixture());
  const site = options.site ?? 'Plant 4';
  const data = path.join(dir, 'data');
  const { public_key } = await initRelay(data, site);
  const keyFile = path.join(dir, 'product.pem');
  const fileFile = path.join(dir, 'relay.lic');
  const serial = options.file?.serial ?? 'LIC-CAD-0000000000000001';
  writeFileSync(keyFile, product.publicKeyPem);
  writeFileSync(fileFile, relayFile(product, { ...options.file, relayPublicKey: public_key, site }));
  const child = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      'apps/relay/src/main.ts',
      ...['start', '--data', data, '--public-key', keyFile, '--file', fileFile, '--port', '0'],
      ...['--log-level', 'warn'],
    ],
    {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    remove();
  };
  let url: string;
  try {
    url = await listening(child);
  } catch (error) {
    await stop();
    throw error;
  }
  let version = 0;
  const revoke = async (): Promise<void> => {
    version += 1;
    const listFile = path.join(dir, `revocations-${version}.jwt`);
    writeFileSync(listFile, revocationList(product, { version, entries: [{ serial, status: 'revoked' }] }));
    let output = '';
    const io = {
      stdout: (text: string) => (output += text),
      stderr: (text: string) => (output += text),
      stopped: () => new Promise<void>(() => undefined),
    };
    const code = await runRelayCli(
      ['revocations', 'import', listFile, '--data', data, '--public-key', keyFile],
      io,
    );
    if (code !== 0) throw new Error(`revocations import exited ${code}: ${output}`);
  };
  const revokeCommand = () => {
    version += 1;
    const listFile = path.join(dir, `revocations-${version}.jwt`);
    writeFileSync(listFile, revocationList(product, { version, entries: [{ serial, status: 'revoked' }] }));
    return {
      argv: [
        process.execPath,
        ...['-r', '@swc-node/register', 'apps/relay/src/main.ts', 'revocations', 'import', listFile],
        ...['--data', data, '--public-key', keyFile],
      ],
      cwd: ROOT,
      env: { SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
    };
  };
  return { url, product, serial, revoke, revokeCommand, stop };
}

function listening(child: ChildProcess): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve(url);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the relay exited (${code}): ${output}`)));
  });
}

export interface TamperingProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A man in the middle between a client and a relay: it passes `GET /v1/status` through untouched
 * (the genuine relay file and its signature), and changes one byte of every other answer's body
 * (a lease's `expires_at`, say) while keeping the relay's `Licensing-Signature`.
 */
export async function startTamperingProxy(target: string): Promise<TamperingProxy> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'licensing-nonce']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${request.url ?? '/'}`, { method: request.method, headers, body })
        .then(async (answer) => {
          let text = await answer.text();
          if (!request.url?.startsWith('/v1/status') && text.length > 0) {
            text = text.replace(
              /"expires_at":"(\d)/,
              (_, digit: string) => `"expires_at":"${(Number(digit) + 1) % 10}`,
            );
          }
          const out: Record<string, string> = {};
          answer.headers.forEach((value, name) => {
            if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection')
              out[name] = value;
          });
          response.writeHead(answer.status, out).end(text);
        })
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
