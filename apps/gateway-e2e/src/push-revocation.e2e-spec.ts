import { get } from 'node:http';
import { INestApplication } from '@nestjs/common';
import {
  SseParser,
  ServerSentEvent,
  subscribeLicenseEvents,
  LicenseEvent,
} from '@licensing/license-verifier';
import { LicenseEventHub, loadGatewayConfig, startGateway } from '@licensing/app/gateway';
import { waitFor } from '@licensing/shared/testing';
import { apiKeyWithScopes, createLicense, productWithKeyPair } from './support/fixtures';
import { TestOrganization, TestStack, startStack } from './support/stack';

/** A raw stream of GET /licenses/events, read with fetch and the SDK's parser. */
interface Stream {
  events: ServerSentEvent[];
  status: number;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * With node:http rather than fetch: aborting a fetch body makes its pool open a spare connection,
 * which a closing server then waits for.
 */
function openStream(
  baseUrl: string,
  apiKey: string,
  serials: string[],
  lastEventId?: string,
): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const request = get(
      `${baseUrl}/api/v1/licenses/events?serials=${serials.join(',')}`,
      {
        agent: false,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
      },
      (response) => {
        const events: ServerSentEvent[] = [];
        const parser = new SseParser();
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => events.push(...parser.feed(chunk)));
        const ended = new Promise<void>((done) => response.on('close', done));
        resolve({ events, status: response.statusCode!, ended, close: () => request.destroy() });
      },
    );
    request.on('error', reject);
  });
}

const named = (stream: Stream, event: string) => stream.events.filter((e) => e.event === event);
const ready = (stream: Stream) => waitFor(() => named(stream, 'ready')[0], { what: 'the ready event' });
const dataOf = (event: ServerSentEvent) => JSON.parse(event.data) as Record<string, unknown>;

/**
 * Push revocation: an application following its serials over Server-Sent Events learns of a
 * revocation, suspension or reinstatement made through any gateway, resumes without a gap after a
 * reconnect, and never sees another organization's licenses.
 */
describe('push revocation (GET /licenses/events)', () => {
  let stack: TestStack;
  let org: TestOrganization;
  let orgB: TestOrganization;
  let clientKey: string;
  let productId: string;
  /** A second gateway replica: streams are opened here, changes made through the first. */
  let second: INestApplication;
  let secondUrl: string;
  const opened: Stream[] = [];

  const newLicense = async (owner = org) => {
    const product = owner === org ? productId : (await productWithKeyPair(owner.api)).product.id;
    return createLicense(owner.api, { product_id: product });
  };
  const open = async (...args: Parameters<typeof openStream>) => {
    // A gateway that cannot bind the license events feed in time answers 503: retried.
    const stream = await waitFor(
      async () => {
        const candidate = await openStream(...args);
        if (candidate.status === 503) candidate.close();
        return candidate.status === 503 ? undefined : candidate;
      },
      { what: 'the gateway to accept streams' },
    );
    opened.push(stream);
    return stream;
  };

  beforeAll(async () => {
    stack = await startStack();
    [org, orgB] = await Promise.all([stack.newOrganization(), stack.newOrganization()]);
    clientKey = (await apiKeyWithScopes(org.api, ['client'])).key.key;
    productId = (await productWithKeyPair(org.api)).product.id;
    second = await startGateway(loadGatewayConfig(stack.env));
    const address = second.getHttpServer().address() as { port: number };
    secondUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const stream of opened) stream.close();
    await second.close();
    await stack.close();
  });

  it('delivers a revocation made through another gateway within a second, and suspensions and reinstatements', async () => {
    const license = await newLicense();
    const stream = await open(secondUrl, clientKey, [license.serial, 'LIC-NOT-A-LICENSE-0000']);
    expect(stream.status).toBe(200);
    await ready(stream);

    const suspended = await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
    expect(suspended.status).toBe(200);
    await waitFor(() => named(stream, 'license.suspended')[0], { what: 'license.suspended' });
    expect((await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'active' })).status).toBe(200);
    await waitFor(() => named(stream, 'license.reinstated')[0], { what: 'license.reinstated' });

    expect((await org.api.delete(`/api/v1/licenses/${license.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    const event = await waitFor(() => named(stream, 'license.revoked')[0], {
      timeoutMs: 1_000,
      intervalMs: 5,
      what: 'license.revoked within a second of DELETE returning',
    });
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(1_000);
    expect(dataOf(event)).toMatchObject({
      type: 'license.revoked',
      serial: license.serial,
      status: 'revoked',
      revoked_at: expect.any(String),
    });
    // Ids are stream positions: increasing, each event after the stream's ready position.
    const ids = stream.events.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(stream.events.map((e) => e.event)).toEqual([
      'ready',
      'license.suspended',
      'license.reinstated',
      'license.revoked',
    ]);
  });

  it('replays the changes made while disconnected on a reconnect with Last-Event-ID, then goes on live', async () => {
    const [a, b, c] = [await newLicense(), await newLicense(), await newLicense()];
    const first = await open(secondUrl, clientKey, [a.serial, b.serial]);
    await ready(first);
    const resumeFrom = first.events.at(-1)!.id!;
    first.close();

    // While disconnected: a revoked, b suspended, and a license nobody follows revoked.
    await org.api.delete(`/api/v1/licenses/${a.id}`);
    await org.api.patch(`/api/v1/licenses/${b.id}`, { status: 'suspended' });
    await org.api.delete(`/api/v1/licenses/${c.id}`);

    // Reconnected through the other gateway, as a load balancer may send it.
    const resumed = await open(stack.baseUrl, clientKey, [a.serial, b.serial], resumeFrom);
    await ready(resumed);
    expect(resumed.events.map((e) => [e.event, e.event === 'ready' ? null : dataOf(e).serial])).toEqual([
      ['license.revoked', a.serial],
      ['license.suspended', b.serial],
      ['ready', null],
    ]);
    await org.api.patch(`/api/v1/licenses/${b.id}`, { status: 'active' });
    await waitFor(() => named(resumed, 'license.reinstated')[0], { what: 'the live event after the replay' });
    expect(named(resumed, 'reset')).toEqual([]);
  });

  it('answers an id it cannot resume from with a reset event, then streams on', async () => {
    const license = await newLicense();
    const stream = await open(secondUrl, clientKey, [license.serial], 'not-an-id');
    await ready(stream);
    expect(stream.events.map((e) => e.event)).toEqual(['reset', 'ready']);
    expect(dataOf(stream.events[0]!)).toEqual({ reason: 'unknown_event_id' });
    await org.api.delete(`/api/v1/licenses/${license.id}`);
    await waitFor(() => named(stream, 'license.revoked')[0], { what: 'license.revoked after a reset' });
  });

  it("never sends organization B anything about organization A's serials, live or replayed", async () => {
    const ofA = await newLicense();
    const ofB = await newLicense(orgB);
    const streamA = await open(secondUrl, clientKey, [ofA.serial]);
    const streamB = await open(secondUrl, orgB.adminKey, [ofA.serial, ofB.serial]);
    await Promise.all([ready(streamA), ready(streamB)]);
    const resumeB = named(streamB, 'ready')[0]!.id!;

    await org.api.delete(`/api/v1/licenses/${ofA.id}`);
    await waitFor(() => named(streamA, 'license.revoked')[0], { what: "A's revocation on A's stream" });
    // B's own revocation comes after A's in the stream: once B has it, A's would have arrived too.
    await orgB.api.delete(`/api/v1/licenses/${ofB.id}`);
    await waitFor(() => named(streamB, 'license.revoked')[0], { what: "B's own revocation" });
    expect(streamB.events.filter((e) => e.event !== 'ready').map((e) => dataOf(e).serial)).toEqual([
      ofB.serial,
    ]);

    const replayedB = await open(stack.baseUrl, orgB.adminKey, [ofA.serial, ofB.serial], resumeB);
    await ready(replayedB);
    expect(replayedB.events.filter((e) => e.event !== 'ready').map((e) => dataOf(e).serial)).toEqual([
      ofB.serial,
    ]);
  });

  it('refuses a stream without serials, with too many, or without a key, as problem+json', async () => {
    const tooMany = Array.from({ length: 101 }, (_, i) => `LIC-X-${i}`).join(',');
    for (const path of ['/api/v1/licenses/events', `/api/v1/licenses/events?serials=${tooMany}`]) {
      const response = await org.api.get(path);
      expect({ path, status: response.status, code: response.body.code }).toEqual({
        path,
        status: 400,
        code: 'validation_failed',
      });
    }
    expect((await stack.anonymous.get('/api/v1/licenses/events?serials=LIC-X')).status).toBe(401);
  });

  it('is followed by the SDK, which reconnects by itself and resumes without a gap', async () => {
    const license = await newLicense();
    const other = await newLicense();
    const received: LicenseEvent[] = [];
    let opens = 0;
    const subscription = subscribeLicenseEvents({
      baseUrl: secondUrl,
      apiKey: clientKey,
      serials: [license.serial, other.serial],
      retryDelayMs: 50,
      onEvent: (event) => received.push(event),
      onOpen: () => (opens += 1),
    });
    try {
      await waitFor(() => opens === 1, { what: 'the SDK stream to open' });
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
      await waitFor(() => received.length === 1, { what: 'the first event' });
      // Every stream this gateway holds is cut (a proxy restart); a revocation happens meanwhile.
      second.getHttpServer().closeAllConnections();
      await org.api.delete(`/api/v1/licenses/${other.id}`);
      await waitFor(() => opens === 2, { what: 'the SDK to reconnect' });
      await waitFor(() => received.length === 2, { what: 'the revocation made while cut off' });
      expect(received.map((e) => [e.type, e.serial])).toEqual([
        ['license.suspended', license.serial],
        ['license.revoked', other.serial],
      ]);
      expect(subscription.lastEventId).toBe(received[1]!.id);
    } finally {
      subscription.close();
      await subscription.closed;
    }
  });

  it('reads the license events only while it serves a stream, and binds again without a gap', async () => {
    const idle = await startGateway(loadGatewayConfig({ ...stack.env, PUSH_FEED_IDLE_MS: '300' }));
    try {
      const url = `http://127.0.0.1:${(idle.getHttpServer().address() as { port: number }).port}`;
      const hub = idle.get(LicenseEventHub);
      const license = await newLicense();
      // Booted, no stream: it reads nothing, while license events go by.
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'suspended' });
      expect(hub.reading).toBe(false);

      // The first stream binds the feed before it is answered: ready at once, then live events.
      const first = await openStream(url, clientKey, [license.serial]);
      opened.push(first);
      expect(first.status).toBe(200);
      expect(hub.reading).toBe(true);
      const resumeFrom = (await ready(first)).id!;
      await org.api.patch(`/api/v1/licenses/${license.id}`, { status: 'active' });
      await waitFor(() => named(first, 'license.reinstated')[0], { what: 'license.reinstated, live' });

      // Its last stream closed: idle after PUSH_FEED_IDLE_MS.
      first.close();
      await waitFor(() => !hub.reading || undefined, { what: 'the feed to stop once idle' });
      await org.api.delete(`/api/v1/licenses/${license.id}`);

      // Resumed while nobody read: the revocation is replayed from the stream, nothing is lost.
      const resumed = await openStream(url, clientKey, [license.serial], resumeFrom);
      opened.push(resumed);
      await ready(resumed);
      expect(resumed.events.map((e) => e.event)).toEqual(['license.reinstated', 'license.revoked', 'ready']);
      expect(hub.reading).toBe(true);
    } finally {
      await idle.close();
    }
  });

  it('ends a stream at once when the API key or license token that opened it is revoked, on any gateway', async () => {
    const license = await newLicense();
    const key = await apiKeyWithScopes(org.api, ['client']);
    const token = await org.api.post(`/api/v1/licenses/${license.id}/tokens`, {});
    const byKey = await open(secondUrl, key.key.key, [license.serial]);
    const byToken = await open(secondUrl, token.body.token, [license.serial]);
    const bystander = await open(secondUrl, clientKey, [license.serial]);
    await Promise.all([ready(byKey), ready(byToken), ready(bystander)]);

    expect((await org.api.delete(`/api/v1/api-keys/${key.key.id}`)).status).toBe(200);
    expect((await org.api.delete(`/api/v1/license-tokens/${token.body.id}`)).status).toBe(200);
    const within = (ms: number) =>
      new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), ms));
    await Promise.race([Promise.all([byKey.ended, byToken.ended]), within(3_000)]);
    // Another credential's stream goes on.
    expect(
      await Promise.race([
        bystander.ended.then(() => 'ended'),
        new Promise((r) => setTimeout(() => r('open'), 300)),
      ]),
    ).toBe('open');
  });

  it('ends its streams when the gateway shuts down, without holding the shutdown', async () => {
    const third = await startGateway(loadGatewayConfig(stack.env));
    const url = `http://127.0.0.1:${(third.getHttpServer().address() as { port: number }).port}`;
    const license = await newLicense();
    const stream = await open(url, clientKey, [license.serial]);
    await ready(stream);
    await third.close();
    await stream.ended;
  });
});
