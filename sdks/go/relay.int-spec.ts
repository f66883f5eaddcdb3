// The Go SDK's RelayClient against a real relay process. This spec starts the relay
// (`licensing-relay start`, from the sources) with a relay file signed by a product key of its own,
// a second relay whose file another product signed, and a proxy that changes the first relay's
// lease answers. Then `go test` runs TestRelay (licensing/relay_test.go) with their addresses.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  productFixture,
  startRelayProcess,
  startTamperingProxy,
  type RelayProcess,
  type TamperingProxy,
} from '../../apps/relay/src/testing/relay-process';

const run = promisify(execFile);
const GO_DIR = __dirname;
const GO_HOME = join(tmpdir(), 'licensing-go-sdk');
const goEnv = {
  GOCACHE: join(GO_HOME, 'cache'),
  GOPATH: join(GO_HOME, 'path'),
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOTOOLCHAIN: 'local',
  GOTELEMETRY: 'off',
  CGO_ENABLED: '0',
};

describe('the Go SDK leasing from a relay', () => {
  let relay: RelayProcess;
  let foreign: RelayProcess;
  let proxy: TamperingProxy;

  beforeAll(async () => {
    await run('sh', [join(GO_DIR, 'scripts/ensure-toolchain.sh')], { env: { ...process.env, ...goEnv } });
    [relay, foreign] = await Promise.all([
      startRelayProcess({ file: { seats: 2, heartbeatIntervalSeconds: 2 } }),
      productFixture().then((product) => startRelayProcess({ product })),
    ]);
    proxy = await startTamperingProxy(relay.url);
  }, 600_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([relay?.stop(), foreign?.stop()]);
  });

  it('leases, heartbeats, releases, refuses no seats, a forged answer, another product, a revoked license', async () => {
    let output: string;
    try {
      ({ stdout: output } = await run(
        'go',
        ['test', '-count=1', '-v', '-run', '^TestRelay$', './licensing'],
        {
          cwd: GO_DIR,
          maxBuffer: 16 * 1024 * 1024,
          env: {
            ...process.env,
            ...goEnv,
            RELAY_URL: relay.url,
            RELAY_PRODUCT_KEY: relay.product.publicKeyPem,
            RELAY_SERIAL: relay.serial,
            RELAY_PROXY_URL: proxy.url,
            RELAY_FOREIGN_URL: foreign.url,
            RELAY_REVOKE_COMMAND: JSON.stringify(relay.revokeCommand()),
          },
        },
      ));
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`go test failed:\n${stdout}${stderr}`);
    }
    expect(output).toContain('--- PASS: TestRelay ');
    expect(output).not.toContain('SKIP');
    for (const name of ['leases', 'refuses_an_answer', 'refuses_a_relay_file', 'reports_a_revoked'])
      expect(output).toMatch(new RegExp(`--- PASS: TestRelay/${name}`));
  }, 120_000);
});
