import { MsgHdrs, headers as natsHeaders } from 'nats';
import { DomainError } from '@licensing/shared/errors';
import {
  Context,
  Span,
  SpanOptions,
  extractTraceContext,
  failSpan,
  injectTraceContext,
  withSpan,
} from '@licensing/shared/tracing';

/*
 * The bus's spans. Every function here is called only when `tracing.enabled`; the callers check
 * it first, so a process that does not trace never reaches this file.
 */

const setter = { set: (carrier: MsgHdrs, key: string, value: string) => carrier.set(key, value) };
const getter = {
  // nats.js answers '' for a header that is absent.
  get: (carrier: MsgHdrs | undefined, key: string) => carrier?.get(key) || undefined,
  keys: (carrier: MsgHdrs | undefined) => carrier?.keys() ?? [],
};

/** Message headers carrying the active span's `traceparent` (and `tracestate`), added to `headers` if given. */
export function traceHeaders(headers: MsgHdrs = natsHeaders()): MsgHdrs {
  return injectTraceContext(headers, setter);
}

/** The trace a message's headers continue (the root context when they carry none). */
export function traceContextOf(headers: MsgHdrs | undefined): Context {
  return extractTraceContext(headers, getter);
}

/** `licensing.events.<org>.license.created` → `licensing.events`: a span name of bounded cardinality. */
export function subjectFamily(subject: string): string {
  return subject.split('.', 2).join('.');
}

/**
 * Runs `work` in a span that ends when it settles. A DomainError of a server-side kind (5xx:
 * unavailable, internal) or any other exception marks the span failed; a 4xx is the caller's
 * business and leaves it unset.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return withSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      if (!(error instanceof DomainError)) failSpan(span, 'error');
      else if (error.status >= 500) failSpan(span, error.code);
      else span.setAttribute('error.type', error.code);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The attributes every bus span has: OpenTelemetry's messaging conventions, NATS as the system. */
export function messagingAttributes(
  operation: 'send' | 'process' | 'receive',
  destination: string,
): Record<string, string> {
  return {
    'messaging.system': 'nats',
    'messaging.operation.type': operation,
    'messaging.destination.name': destination,
  };
}
