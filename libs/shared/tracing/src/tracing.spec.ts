import { SpanKind, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  activeTraceCarrier,
  activeTraceIds,
  inTraceOf,
  startTracing,
  stopTracing,
  tracing,
  tracingConfigured,
  withSpan,
} from './tracing';

describe('tracing', () => {
  const saved = { ...process.env };
  afterEach(async () => {
    await stopTracing();
    process.env = { ...saved };
  });

  it('is configured by an OTLP endpoint, and only then', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(
      true,
    );
    expect(
      tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
  });

  it('stays off without an endpoint: no provider, no context manager, no propagator', () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    expect(startTracing({ service: 'gateway' })).toBe(false);
    expect(tracing.enabled).toBe(false);
    // The API's no-op globals: a span started anyway records nothing and carries no trace.
    const span = trace.getTracer('any').startSpan('x');
    expect(span.isRecording()).toBe(false);
    expect(context.with(trace.setSpan(context.active(), span), () => activeTraceCarrier())).toBeUndefined();
  });

  it('names the service after the process unless OTEL_SERVICE_NAME says otherwise', async () => {
    const exporter = new InMemorySpanExporter();
    startTracing({ service: 'license-service', spanProcessor: new SimpleSpanProcessor(exporter) });
    withSpan('a', { kind: SpanKind.INTERNAL }, (span) => span.end());
    expect(exporter.getFinishedSpans()[0].resource.attributes['service.name']).toBe('license-service');
    await stopTracing();

    process.env.OTEL_SERVICE_NAME = 'licensing-eu';
    const renamed = new InMemorySpanExporter();
    startTracing({ service: 'license-service', spanProcessor: new SimpleSpanProcessor(renamed) });
    withSpan('b', { kind: SpanKind.INTERNAL }, (span) => span.end());
    expect(renamed.getFinishedSpans()[0].resource.attributes['service.name']).toBe('licensing-eu');
  });

  it('samples as OTEL_TRACES_SAMPLER says', () => {
    process.env.OTEL_TRACES_SAMPLER = 'always_off';
    const exporter = new InMemorySpanExporter();
    startTracing({ service: 'gateway', spanProcessor: new SimpleSpanProcessor(exporter) });
    withSpan('dropped', { kind: SpanKind.SERVER }, (span) => span.end());
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('carries a trace through a stored carrier, as the outbox does', () => {
    startTracing({ service: 'gateway', spanProcessor: new SimpleSpanProcessor(new InMemorySpanExporter()) });
    const { carrier, ids } = withSpan('request', { kind: SpanKind.SERVER }, (span) => {
      const stored = { carrier: activeTraceCarrier()!, ids: activeTraceIds()! };
      span.end();
      return stored;
    });
    expect(carrier.traceparent).toBe(`00-${ids.trace_id}-${ids.span_id}-01`);
    expect(activeTraceIds()).toBeUndefined();
    const continued = inTraceOf(carrier, () =>
      withSpan('publish', { kind: SpanKind.PRODUCER }, (span) => {
        span.end();
        return activeTraceIds();
      }),
    );
    expect(continued?.trace_id).toBe(ids.trace_id);
  });
});
