import {
  Context,
  Link,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  TextMapGetter,
  TextMapSetter,
  Tracer,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  detectResources,
  defaultResource,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { patchPg } from './pg';

export { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
export type { Context, Link, Span } from '@opentelemetry/api';

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Record<string, string | number | boolean>;
  /** The context the span starts in; the active one by default. */
  parent?: Context;
  links?: Link[];
}

export interface TracingOptions {
  /** The process's name: the traces' `service.name` unless OTEL_SERVICE_NAME names another. */
  service: string;
  /**
   * Where finished spans go instead of the OTLP exporter, and tracing on whatever the environment
   * says: a test's InMemorySpanExporter behind a SimpleSpanProcessor.
   */
  spanProcessor?: SpanProcessor;
}

interface TracingState {
  enabled: boolean;
  provider?: NodeTracerProvider;
  tracer?: Tracer;
  unpatch?: () => void;
}

const state: TracingState = { enabled: false };

/**
 * Whether this process traces. Every hot path reads `tracing.enabled` and, when it is false, does
 * nothing else of tracing: no header read or written, no span, no context lookup.
 */
export const tracing: { readonly enabled: boolean } = state;

/** Tracing is on when an OTLP endpoint is configured (and the SDK is not switched off). */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Turns tracing on for this process, first thing in its `main.ts`, if OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; answers whether it did. Spans are batched and sent
 * over OTLP/HTTP (the exporter and the batch processor read their OTEL_* variables), sampled as
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG say (by default: every trace a caller did not
 * decide otherwise for), and propagated as W3C `traceparent`/`tracestate`. PostgreSQL queries
 * become spans of the request they serve; queries outside any traced request (sweeps, pollers) do
 * not.
 */
export function startTracing(options: TracingOptions): boolean {
  if (state.enabled) return true;
  if (!options.spanProcessor && !tracingConfigured(process.env)) return false;
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.service }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the process's own name.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [options.spanProcessor ?? new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Only trace context crosses processes: no baggage header to parse on every message.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  state.provider = provider;
  state.tracer = provider.getTracer('licensing');
  state.unpatch = patchPg(provider);
  state.enabled = true;
  return true;
}

/** Sends every finished span now: on shutdown, before the process exits. */
export async function flushTracing(): Promise<void> {
  await state.provider?.forceFlush();
}

/** Flushes and turns tracing off again (tests, which start it for one file). */
export async function stopTracing(): Promise<void> {
  const provider = state.provider;
  if (!provider) return;
  state.enabled = false;
  state.unpatch?.();
  Object.assign(state, { provider: undefined, tracer: undefined, unpatch: undefined });
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** The tracer of the platform's own spans. Only call it when `tracing.enabled`. */
export function tracer(): Tracer {
  if (!state.tracer) throw new Error('tracer() called while tracing is off');
  return state.tracer;
}

/** Runs `fn` in a new span, started in the active context (or `options.parent`), which is the active one within `fn`. */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => T): T {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    parent,
  );
  return context.with(trace.setSpan(parent, span), () => fn(span));
}

/** Links to the spans these contexts carry (those that carry one). */
export function linksTo(contexts: Context[]): Link[] {
  return contexts.flatMap((carried) => {
    const spanContext = trace.getSpanContext(carried);
    return spanContext ? [{ context: spanContext }] : [];
  });
}

/** Marks a span failed with `code` (a server-side failure: 5xx, a timeout, no responder). */
export function failSpan(span: Span, code: string): void {
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** Writes the active trace context into `carrier` (message headers): `traceparent`, and `tracestate` if any. */
export function injectTraceContext<Carrier>(carrier: Carrier, setter: TextMapSetter<Carrier>): Carrier {
  propagation.inject(context.active(), carrier, setter);
  return carrier;
}

/** The context a `traceparent` in `carrier` continues; the root context when there is none or it is malformed. */
export function extractTraceContext<Carrier>(carrier: Carrier, getter: TextMapGetter<Carrier>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier, getter);
}

/** The trace id of the active span, for log lines; undefined outside any span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The trace context of the active span as plain `traceparent`/`tracestate` entries: what an outbox row keeps. */
export function activeTraceCarrier(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** Runs `fn` in the trace a carrier from `activeTraceCarrier()` stands for. */
export function inTraceOf<T>(carrier: Record<string, string>, fn: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, carrier), fn);
}
