import { Writable } from 'node:stream';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing, stopTracing, withSpan } from '@licensing/shared/tracing';
import { NestPinoLogger, createLogger } from './logger';
import { requestContext } from './request-context';

/** A logger whose lines are kept, parsed. */
function capture(level: 'info' | 'debug' = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('test', level, destination), lines };
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

describe('NestPinoLogger', () => {
  it("logs Nest's boot wiring (modules loaded, routes mapped) at debug, and the rest as Nest says", () => {
    const { logger, lines } = capture();
    const nest = new NestPinoLogger(logger);
    nest.log('Mapped {/v1/licenses, POST} route', 'RouterExplorer');
    nest.log('LicensesController {/v1/licenses}:', 'RoutesResolver');
    nest.log('AppModule dependencies initialized', 'InstanceLoader');
    nest.log('Nest application successfully started', 'NestApplication');
    expect(lines.map((line) => line.msg)).toEqual(['Nest application successfully started']);
    const debugging = capture('debug');
    new NestPinoLogger(debugging.logger).log('Mapped {/v1/licenses, POST} route', 'RouterExplorer');
    expect(debugging.lines).toEqual([
      expect.objectContaining({
        level: 'debug',
        context: 'RouterExplorer',
        msg: 'Mapped {/v1/licenses, POST} route',
      }),
    ]);
  });
});
