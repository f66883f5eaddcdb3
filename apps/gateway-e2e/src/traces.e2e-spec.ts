import { InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { waitFor } from '@licensing/shared/testing';
import { startTracing, stopTracing } from '@licensing/shared/tracing';
import { TestOrganization, TestStack, startStack } from './support/stack';
import { apiKeyWithScopes, productWithKeyPair } from './support/fixtures';

/**
 * One request's trace across the platform: the whole stack in this process, tracing on with the
 * spans kept in memory instead of sent over OTLP, so that the test reads the trace a collector
 * would receive.
 */
describe('traces', () => {
  const exporter = new InMemorySpanExporter();
  let stack: TestStack;
  let org: TestOrganization;

  beforeAll(async () => {
    startTracing({ service: 'traces-test', spanProcessor: new SimpleSpanProcessor(exporter) });
    stack = await startStack();
    org = await stack.newOrganization();
  });
  afterAll(async () => {
    await stack?.close();
    await stopTracing();
  });

  const spansOf = (traceId: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
  /** The one span of the trace with that name whose parent is `parent`; fails naming what there is. */
  const childOf = (spans: ReadableSpan[], parent: ReadableSpan, name: string | RegExp): ReadableSpan => {
    const found = spans.filter(
      (span) =>
        parentOf(span) === parent.spanContext().spanId &&
        (typeof name === 'string' ? span.name === name : name.test(span.name)),
    );
    if (found.length === 0) {
      const children = spans.filter((span) => parentOf(span) === parent.spanContext().spanId);
      throw new Error(
        `no ${String(name)} under ${parent.name}; its children: ${children.map((s) => s.name).join(', ')}`,
      );
    }
    return found[0];
  };
  /** The trace of the HTTP request answered with this `x-request-id`, once its spans have ended. */
  const traceOfRequest = (requestId: string, ready: (spans: ReadableSpan[]) => boolean) =>
    waitFor(
      () => {
        const http = exporter
          .getFinishedSpans()
          .find(
            (span) => span.kind === SpanKind.SERVER && span.attributes['licensing.request_id'] === requestId,
          );
        if (!http) return undefined;
        const spans = spansOf(http.spanContext().traceId);
        return ready(spans) && { http, spans };
      },
      { what: `the spans of request ${requestId}` },
    );

  it('follows a license creation from the HTTP request to PostgreSQL and through JetStream to the consumers', async () => {
    const { product } = await productWithKeyPair(org.api);
    const created = await org.api.post('/api/v1/licenses', { product_id: product.id });
    expect(created.status).toBe(201);

    const { http, spans } = await traceOfRequest(created.headers.get('x-request-id')!, (spans) =>
      ['publish licensing.events', 'publish licensing.audit'].every((name) =>
        spans.some((span) => span.name === name),
      ),
    );
    expect(http).toMatchObject({
      name: 'POST /api/v1/licenses',
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/api/v1/licenses',
        'http.response.status_code': 201,
      },
    });
    expect(parentOf(http)).toBeUndefined();

    // gateway → bus → license service's handler → its queries and its transaction's events.
    const send = childOf(spans, http, 'send license.create.v1');
    expect(send.kind).toBe(SpanKind.CLIENT);
    expect(send.attributes).toMatchObject({
      'messaging.system': 'nats',
      'messaging.destination.name': 'license.create.v1',
      'licensing.org_id': org.id,
    });
    const handler = childOf(spans, send, 'process license.create.v1');
    expect(handler.kind).toBe(SpanKind.SERVER);
    expect(handler.attributes['messaging.consumer.group.name']).toBe('license-service');
    // One named statement writes the license, its event and its audit entry.
    const insert = childOf(spans, handler, /^pg\.query:license-create/);
    expect(insert.kind).toBe(SpanKind.CLIENT);
    expect(insert.attributes).toMatchObject({
      'db.system.name': 'postgresql',
      'db.query.text': expect.stringMatching(/INSERT INTO license\.licenses\b/) as unknown,
    });

    // The outbox relay publishes later, from a loop of its own, but in the trace the row kept.
    const published = childOf(spans, handler, 'publish licensing.events');
    expect(published.kind).toBe(SpanKind.PRODUCER);
    expect(published.attributes['messaging.destination.name']).toMatch(/\.license\.created$/);
    childOf(spans, handler, 'publish licensing.audit');

    // Consumers continue the trace from the message's headers: the webhook fan-out, the
    // revocation cache, the gateway's audit log.
    const consumers = await waitFor(
      () => {
        const found = spansOf(http.spanContext().traceId).filter(
          (span) => span.kind === SpanKind.CONSUMER && parentOf(span) !== undefined,
        );
        const durables = new Set(found.map((span) => span.attributes['messaging.consumer.group.name']));
        return (
          ['webhook-service', 'revocation-service', 'gateway-audit'].every((d) => durables.has(d)) && found
        );
      },
      { what: 'the consumers of the events' },
    );
    const all = spansOf(http.spanContext().traceId);
    for (const consumer of consumers) {
      const parent = all.find((span) => span.spanContext().spanId === parentOf(consumer));
      expect({ consumer: consumer.name, parent: parent?.name }).toEqual({
        consumer: consumer.name,
        parent: expect.stringMatching(/^publish licensing\.(events|audit)$/) as unknown,
      });
    }
  });

  it('follows a sync from the HTTP request through the revocation service to the analytics service', async () => {
    const { product } = await productWithKeyPair(org.api);
    const license = await org.api.post('/api/v1/licenses', { product_id: product.id });
    const { api: client } = await apiKeyWithScopes(org.api, ['client']);
    const synced = await client.post('/api/v1/licenses/sync', {
      license_serial: license.body.serial,
      hardware_fingerprint: 'm1',
      app_version: '2.4.1',
      features_used: [],
      seats_in_use: 1,
    });
    expect(synced.status).toBe(200);

    const { http, spans } = await traceOfRequest(synced.headers.get('x-request-id')!, (spans) =>
      spans.some((span) => span.attributes['messaging.consumer.group.name'] === 'analytics-service'),
    );
    expect(http.name).toBe('POST /api/v1/licenses/sync');
    const handler = childOf(
      spans,
      childOf(spans, http, 'send revocation.sync.v1'),
      'process revocation.sync.v1',
    );
    const published = childOf(spans, handler, 'publish licensing.sync-reports');
    const consumed = childOf(spans, published, 'process licensing.sync-reports');
    expect(consumed.kind).toBe(SpanKind.CONSUMER);
    // The analytics service's batch insert is part of the trace too.
    const stored = childOf(spans, consumed, /^pg\.query:/);
    expect(stored.attributes['db.query.text']).toContain('analytics.store_sync_reports');
  });

  it('continues the trace a caller sends in traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const answer = await org.api.get('/api/v1/licenses', { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(answer.status).toBe(200);

    const { http, spans } = await traceOfRequest(answer.headers.get('x-request-id')!, (spans) =>
      spans.some((span) => span.name === 'process license.list.v1'),
    );
    expect(http.spanContext().traceId).toBe(traceId);
    expect(parentOf(http)).toBe(callerSpan);
    childOf(spans, childOf(spans, http, 'send license.list.v1'), 'process license.list.v1');
  });
});
