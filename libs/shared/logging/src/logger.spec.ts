import { Writable } from 'node:stream';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing, stopTracing, withSpan } from '@licensing/shared/tracing';
import { createLogger } from './logger';
import { requestContext } from './request-context';

/** A logger whose lines are kept, parsed. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('test', 'info', destination), lines };
}

describe('createLogger', () => {
  afterEach(() => stopTracing());

  it('writes the request context, and no trace fields while tracing is off', () => {
    const { logger, lines } = capture();
    requestContext.run({ request_id: 'r1', org_id: 'o1' }, () => logger.info('hello'));
    expect(lines[0]).toMatchObject({ service: 'test', request_id: 'r1', org_id: 'o1', msg: 'hello' });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[0]).not.toHaveProperty('span_id');
  });

  it('writes the trace and span ids of the active span while tracing is on', () => {
    startTracing({ service: 'test', spanProcessor: new SimpleSpanProcessor(new InMemorySpanExporter()) });
    const { logger, lines } = capture();
    const ids = withSpan('work', { kind: SpanKind.INTERNAL }, (span) => {
      logger.info('inside');
      span.end();
      return span.spanContext();
    });
    logger.info('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
    expect(lines[1].trace_id).toBeUndefined();
  });
});
