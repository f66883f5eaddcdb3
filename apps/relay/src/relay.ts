// The relay's life: `init` makes its database and key pair, `start` loads or re-checks the relay
// file and serves the lease API until it is stopped.
import { createPrivateKey } from 'node:crypto';
import { generateKeyPair } from '@licensing/license-format';
import pino, { type Logger } from 'pino';
import { createRelayServer } from './http/relay-server';
import { LeaseBook, type Clock } from './leases/lease-book';
import type { ProductKey } from './relay-file/product-key';
import { checkRelayFile, loadRelayFile, relayFileBlob } from './relay-file/relay-file';
import { RelayStore } from './store/relay-store';

/** What `init` writes for the vendor: the relay's site and public key. Unsigned: it holds no secret. */
export interface RelayRequest {
  v: 1;
  kind: 'relay_request';
  site: string;
  public_key: string;
}

const SITE = /^[^\p{Cc}\p{Cs}]{1,200}$/u;

export class RelayUsageError extends Error {
  override readonly name = 'RelayUsageError';
}

/** Creates DIR/relay.db with a new Ed25519 key pair and returns the relay request. */
export async function initRelay(
  dataDir: string,
  site: string,
  clock: Clock = Date.now,
): Promise<RelayRequest> {
  if (!SITE.test(site) || site.trim() !== site) {
    throw new RelayUsageError('--site is 1 to 200 printable characters, without leading or trailing spaces');
  }
  const keyPair = await generateKeyPair('ed25519');
  const store = RelayStore.open(dataDir, { create: true });
  try {
    store.write(() => {
      store.setIdentity({
        site,
        public_key_pem: keyPair.publicKeyPem,
        private_key_pem: keyPair.privateKeyPem,
        created_at: clock(),
      });
      store.see(clock());
    });
    return relayRequestOf(store);
  } finally {
    store.close();
  }
}

export function relayRequestOf(store: RelayStore): RelayRequest {
  const { site, public_key_pem } = store.identity();
  return { v: 1, kind: 'relay_request', site, public_key: public_key_pem };
}

export interface StartOptions {
  dataDir: string;
  productKey: ProductKey;
  /** A relay file to load (or to replace the one loaded) before serving. */
  relayFile?: string;
  port: number;
  host: string;
  leaseTtlSeconds: number;
  logLevel?: string;
  /** For tests only: the relay's time. The relay itself always uses the system clock. */
  clock?: Clock;
}

export interface RunningRelay {
  url: string;
  store: RelayStore;
  book: LeaseBook;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * Connections the kernel queues before the server accepts them. Node's default (511) drops the
 * rest of a burst (a whole site starting at 9:00), and each dropped client waits a second or more
 * before it tries again. The kernel caps it at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;

/** How often the latest time seen is written while the relay runs. */
const TICK_MS = 60_000;

/**
 * Loads or re-checks the relay file, then serves the lease API. Throws RelayFileError when the
 * file is refused, before anything is served.
 */
export async function startRelay(options: StartOptions): Promise<RunningRelay> {
  const clock = options.clock ?? Date.now;
  const logger = pino({ level: options.logLevel ?? 'info', base: { service: 'licensing-relay' } });
  const store = RelayStore.open(options.dataDir);
  try {
    const loaded = store.relayFile();
    // The file already loaded, given again (a Kubernetes Secret mounted at every start), is the
    // stored file: it still starts once expired, and the status says so.
    if (options.relayFile !== undefined && relayFileBlob(options.relayFile) !== loaded?.blob) {
      await loadRelayFile(options.relayFile, store, options.productKey, clock());
    } else {
      if (!loaded) throw new RelayUsageError('no relay file is loaded: start with --file relay.lic');
      // The stored file must still verify with the key given now; an expired one still starts
      // (the status says so and nothing is leased).
      await checkRelayFile(loaded.blob, store, options.productKey, clock(), { checkTime: false });
    }
  } catch (error) {
    store.close();
    throw error;
  }

  const identity = store.identity();
  const privateKey = createPrivateKey(identity.private_key_pem);
  const book = new LeaseBook(store, { leaseTtlSeconds: options.leaseTtlSeconds, clock });
  const app = createRelayServer({
    book,
    clock,
    logger,
    signer: () => ({ kid: store.relayFile()!.relay_file_id, privateKey }),
  });
  const tick = setInterval(() => {
    try {
      book.tick();
    } catch (error) {
      logger.error({ err: error }, 'could not record the time');
    }
  }, TICK_MS);
  tick.unref();
  book.tick();

  try {
    await app.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG });
  } catch (error) {
    clearInterval(tick);
    store.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const file = store.relayFile()!;
  logger.info(
    { site: identity.site, serial: file.serial, seats: file.max_seats, relay_file_id: file.relay_file_id },
    'relay started',
  );
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    store,
    book,
    logger,
    close: () =>
      (closing ??= (async () => {
        clearInterval(tick);
        await app.close();
        store.close();
        logger.info('relay stopped');
      })()),
  };
}
