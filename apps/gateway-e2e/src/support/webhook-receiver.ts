import { createHmac, timingSafeEqual } from 'node:crypto';
import { IncomingHttpHeaders, Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';

/** What a receiver does with one request: answer 200, answer 500, or never answer. */
type Behaviour = 'ok' | 'fail' | 'hang';

interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  receivedAt: number;
  /** What the receiver answered (undefined: it never did). */
  answered?: number;
}

/**
 * A webhook receiver on 127.0.0.1, as a customer would run one: it records every request and
 * answers as `behaviour` says for it (by default 200).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  behaviour: (request: ReceivedWebhook, seenBefore: number) => Behaviour = () => 'ok';
  private constructor(private readonly server: Server) {}

  static async start(behaviour?: WebhookReceiver['behaviour']): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    if (behaviour) receiver.behaviour = behaviour;
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const hook: ReceivedWebhook = {
          headers: request.headers,
          raw,
          body: JSON.parse(raw),
          receivedAt: Date.now(),
        };
        const seenBefore = receiver.received.filter((r) => r.body.id === hook.body.id).length;
        receiver.received.push(hook);
        const behaviour = receiver.behaviour(hook, seenBefore);
        if (behaviour === 'hang') return;
        hook.answered = behaviour === 'ok' ? 200 : 500;
        response
          .writeHead(hook.answered, { 'content-type': 'text/plain' })
          .end(behaviour === 'ok' ? 'ok' : 'boom');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  of(predicate: (hook: ReceivedWebhook) => boolean): ReceivedWebhook[] {
    return this.received.filter(predicate);
  }

  /** Requests answered with a 2xx, by event id. */
  deliveredIds(): string[] {
    return this.received.filter((hook) => hook.answered === 200).map((hook) => hook.body.id as string);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The `v1=` signatures of a request that verify with `secret` (docs/webhooks.md, "Verifying"). */
export function validSignatures(hook: ReceivedWebhook, secret: string): number {
  const header = String(hook.headers['licensing-signature'] ?? '');
  const parts = header.split(',').map((part) => part.split('='));
  const t = parts.find(([key]) => key === 't')?.[1];
  if (!t) return 0;
  const expected = createHmac('sha256', secret).update(`${t}.${hook.raw}`).digest();
  return parts
    .filter(([key]) => key === 'v1')
    .filter(([, hex]) => {
      const given = Buffer.from(hex ?? '', 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    }).length;
}
