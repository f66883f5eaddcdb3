// Starts the relays of the SDKs' relay-client tests as one process, for a spec that may not import
// the relay (the JavaScript SDK's, a library the relay itself imports): a relay of two seats whose
// leases live 2 s, a relay whose file another product signed, and a tampering proxy to the first.
// Prints their addresses as one line of JSON, and stops them all at SIGTERM.
import { productFixture, startRelayProcess, startTamperingProxy } from './relay-process';

async function main(): Promise<void> {
  const [relay, foreign] = await Promise.all([
    startRelayProcess({ file: { seats: 2, heartbeatIntervalSeconds: 2 } }),
    productFixture().then((product) => startRelayProcess({ product })),
  ]);
  const proxy = await startTamperingProxy(relay.url);
  const stop = () => {
    void Promise.all([proxy.close(), relay.stop(), foreign.stop()]).finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(
    `${JSON.stringify({
      url: relay.url,
      publicKey: relay.product.publicKeyPem,
      productId: relay.product.productId,
      serial: relay.serial,
      proxyUrl: proxy.url,
      foreignUrl: foreign.url,
      revokeCommand: relay.revokeCommand(),
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
