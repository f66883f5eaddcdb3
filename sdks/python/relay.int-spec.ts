// The Python SDK's RelayClient against a real relay process. This spec starts the relay
// (`licensing-relay start`, from the sources) with a relay file signed by a product key of its own,
// a second relay whose file another product signed, and a proxy that changes the first relay's
// lease answers. Then pytest runs tests/test_relay_e2e.py with their addresses in the environment.
import {
  productFixture,
  startRelayProcess,
  startTamperingProxy,
  type RelayProcess,
  type TamperingProxy,
} from '../../apps/relay/src/testing/relay-process';
import { ensurePython, pytest } from './run-python';

describe('the Python SDK leasing from a relay', () => {
  let relay: RelayProcess;
  let foreign: RelayProcess;
  let proxy: TamperingProxy;

  beforeAll(async () => {
    [relay, foreign] = await Promise.all([
      startRelayProcess({ file: { seats: 2, heartbeatIntervalSeconds: 2 } }),
      productFixture().then((product) => startRelayProcess({ product })),
    ]);
    proxy = await startTamperingProxy(relay.url);
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([relay?.stop(), foreign?.stop()]);
  });

  it('leases, heartbeats, releases, refuses no seats, a forged answer, another product, a revoked license', async () => {
    const python = await ensurePython();
    const done = await pytest(python, ['-m', 'online', '-rs', 'tests/test_relay_e2e.py'], {
      RELAY_URL: relay.url,
      RELAY_PRODUCT_KEY: relay.product.publicKeyPem,
      RELAY_SERIAL: relay.serial,
      RELAY_PROXY_URL: proxy.url,
      RELAY_FOREIGN_URL: foreign.url,
      RELAY_REVOKE_COMMAND: JSON.stringify(relay.revokeCommand()),
    });
    expect(done.out).toMatch(/4 passed/);
    expect(done.out).not.toMatch(/skipped|failed|error/i);
  }, 120_000);
});
