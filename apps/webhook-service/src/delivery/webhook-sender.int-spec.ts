import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { MAX_RESPONSE_BYTES, sendWebhook } from './webhook-sender';

/** A receiver on 127.0.0.1 that counts the requests it is sent. */
async function receiver(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ server: Server; port: number; requests: Array<{ host?: string; body: string }> }> {
  const requests: Array<{ host?: string; body: string }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ host: request.headers.host, body });
      handle(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

const request = (url: string, timeoutMs = 2_000) => ({ url, body: '{"id":"e"}', headers: {}, timeoutMs });
const allow = { allowPrivateNetworks: true };
const deny = { allowPrivateNetworks: false };

describe('sendWebhook, against receivers on this machine', () => {
  it('delivers to a 2xx and reports its status and timing', async () => {
    const { server, port, requests } = await receiver((_q, response) => response.writeHead(204).end());
    try {
      const result = await sendWebhook(request(`http://127.0.0.1:${port}/hook`), allow);
      expect(result).toMatchObject({ delivered: true, statusCode: 204, error: null });
      expect(requests).toEqual([{ host: `127.0.0.1:${port}`, body: '{"id":"e"}' }]);
    } finally {
      await close(server);
    }
  });

  it('refuses a loopback address, and a host name resolving to one, without connecting, while private networks are not allowed', async () => {
    const { server, port, requests } = await receiver((_q, response) => response.end('ok'));
    try {
      const viaName = await sendWebhook(request(`https://hooks.internal.test:${port}/x`), {
        ...deny,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      });
      expect(viaName).toMatchObject({ delivered: false, statusCode: null });
      expect(viaName.error).toMatch(/^refused: hooks.internal.test resolves to 127.0.0.1/);
      // `localhost`, through the system resolver.
      const viaLocalhost = await sendWebhook(request(`https://localhost:${port}/x`), deny);
      expect(viaLocalhost.error).toMatch(/^refused: localhost resolves to/);
      const plainHttp = await sendWebhook(request(`http://127.0.0.1:${port}/x`), deny);
      expect(plainHttp.error).toMatch(/^refused: the URL must use https/);
      expect(requests).toEqual([]);
    } finally {
      await close(server);
    }
  });

  it('connects to the address it checked, never asking DNS again (no rebinding between check and connect)', async () => {
    const { server, port, requests } = await receiver((_q, response) => response.end('ok'));
    let lookups = 0;
    try {
      // A name only this resolver knows: had the HTTP client resolved it again, it would fail.
      const result = await sendWebhook(request(`http://rebind.test:${port}/x`), {
        ...allow,
        resolve: async () => {
          lookups++;
          return [{ address: '127.0.0.1', family: 4 }];
        },
      });
      expect(result).toMatchObject({ delivered: true, statusCode: 200 });
      expect(lookups).toBe(1);
      expect(requests[0]?.host).toBe(`rebind.test:${port}`);
    } finally {
      await close(server);
    }
  });

  it('does not follow a redirect', async () => {
    const target = await receiver((_q, response) => response.end('ok'));
    const { server } = await receiver((_q, response) =>
      response.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end(),
    );
    const port = (server.address() as AddressInfo).port;
    try {
      const result = await sendWebhook(request(`http://127.0.0.1:${port}/x`), allow);
      expect(result).toMatchObject({ delivered: false, statusCode: 302 });
      expect(result.error).toMatch(/redirects are not followed/);
      expect(target.requests).toEqual([]);
    } finally {
      await close(server);
      await close(target.server);
    }
  });

  it('reads at most 64 KiB of an answer, however large', async () => {
    const { server, port } = await receiver((_q, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const more = (): void => {
        while (sent < 1_000 && response.write(chunk)) sent++;
        if (sent < 1_000) response.once('drain', more);
        else response.end();
      };
      more();
    });
    try {
      const result = await sendWebhook(request(`http://127.0.0.1:${port}/x`), allow);
      expect(result).toMatchObject({ delivered: true, statusCode: 200 });
      expect(result.responseBytes).toBe(MAX_RESPONSE_BYTES);
    } finally {
      await close(server);
    }
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const { server, port } = await receiver(() => undefined);
    try {
      const started = Date.now();
      const result = await sendWebhook(request(`http://127.0.0.1:${port}/x`, 300), allow);
      expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'no answer within 300 ms' });
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      await close(server);
    }
  });

  it('keeps a short, printable excerpt of a failed answer', async () => {
    const { server, port } = await receiver((_q, response) =>
      response.writeHead(500).end('boom\u0000\n'.repeat(100)),
    );
    try {
      const result = await sendWebhook(request(`http://127.0.0.1:${port}/x`), allow);
      expect(result.error).toMatch(/^HTTP 500: boom boom/);
      expect(result.error!.length).toBeLessThan(220);
    } finally {
      await close(server);
    }
  });
});
