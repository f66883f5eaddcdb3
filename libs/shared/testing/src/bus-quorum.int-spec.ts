import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineMessage } from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ScriptedPeer } from './bus';
import { NatsNode, killAll, startNatsCluster } from './processes';
import { waitFor } from './wait-for';

const echo = defineMessage<unknown, { echoed: unknown }>('test.echo.v1');
const silent = defineMessage('test.silent.v1');
/** Far longer than anything below may take: a request that waits for it has not failed fast. */
const TIMEOUT_MS = 20_000;

/**
 * A BusClient whose NATS server loses its routes to most of its cluster. The cluster is the test's
 * own: three nodes on this machine. Killing two of them closes the third one's routes at once. A
 * cut that closes nothing (a network partition) is tools/scale-out.int-spec.ts's.
 */
describe('BusClient on a NATS cluster that loses its majority', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-quorum-'));
  let nodes: NatsNode[] = [];
  let peer: ScriptedPeer | undefined;
  const clients: BusClient[] = [];

  const clientOf = async (natsUrl: string, clusterSize?: number) => {
    const client = new BusClient({
      natsUrl,
      clusterSize,
      namespace: 'quorum',
      timeoutMs: TIMEOUT_MS,
      name: 'quorum-test',
    });
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    nodes = await startNatsCluster(dir, 3);
    // The service answers on the first node: the one the clients are connected to.
    peer = (await ScriptedPeer.connect('quorum', nodes[0]!.url))
      .on(echo, (data) => ({ response: { echoed: data } }))
      .on(silent, () => new Promise(() => undefined));
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.onApplicationShutdown();
    await peer?.close();
    await killAll(nodes);
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails every request at once while its server sees no majority, and recovers with it', async () => {
    // Told the size, or counting the servers its URL list names.
    const told = await clientOf(nodes[0]!.url, 3);
    const counted = await clientOf(nodes.map((node) => node.url).join(','));
    // One server named and no size told: nothing to judge.
    const single = await clientOf(nodes[0]!.url);
    for (const client of [told, single]) {
      await expect(client.send(echo, { a: 1 })).resolves.toEqual({ echoed: { a: 1 } });
      expect(client.isAvailable).toBe(true);
    }

    // A request its service never answers waits...
    const waiting = told.send(silent, {}).catch((error: unknown) => error);
    const killed = Date.now();
    await Promise.all([nodes[1]!.kill(), nodes[2]!.kill()]);
    // ...until the server has lost its routes: then it fails, long before its timeout.
    await expect(waiting).resolves.toMatchObject({ code: 'unavailable', status: 503 });
    expect(Date.now() - killed).toBeLessThan(3_000);
    expect(told.isAvailable).toBe(false);

    // A new request fails at once, though its service is connected to the same server.
    const started = Date.now();
    await expect(told.send(echo, {})).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/cut off from most of its cluster/),
    });
    await expect(told.publishDurable('quorum.stream.subject', '{}', 'one')).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(Date.now() - started).toBeLessThan(100);
    await waitFor(() => !counted.isAvailable, {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: 'the counting client cut off',
    });
    // The client that judges nothing still reaches the service on its server.
    await expect(single.send(echo, { a: 2 })).resolves.toEqual({ echoed: { a: 2 } });
    expect(single.isAvailable).toBe(true);

    // One node back: two servers of three are a majority again.
    nodes[1]!.spawn();
    await waitFor(() => told.isAvailable && counted.isAvailable, {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the clients available again',
    });
    await expect(told.send(echo, { a: 3 })).resolves.toEqual({ echoed: { a: 3 } });
  }, 60_000);
});
