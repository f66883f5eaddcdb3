import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger, LevelWithSilent } from 'pino';
import { activeTraceIds, tracing } from '@licensing/shared/tracing';
import { requestContext } from './request-context';

/**
 * One JSON logger per process. Every line written while a request is being handled carries its
 * `request_id`, `org_id` and bus `subject`, read from the async context rather than passed around,
 * and, when the process traces, the `trace_id` and `span_id` of the active span.
 */
export function createLogger(
  service: string,
  level: LevelWithSilent = 'info',
  destination: DestinationStream = pino.destination(1),
): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // The actor and client address are for audit entries; log lines keep to the request's ids.
      mixin: () => {
        const context = requestContext.current();
        const fields = {
          request_id: context?.request_id,
          org_id: context?.org_id,
          subject: context?.subject,
        };
        return tracing.enabled ? { ...fields, ...activeTraceIds() } : fields;
      },
    },
    destination,
  );
}

/**
 * Nest's wiring at boot: a line per module loaded and per route mapped (over 200 for the gateway).
 * Useful when debugging the wiring, noise otherwise: logged at `debug`.
 */
const NEST_WIRING = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Lets Nest's own logging (bootstrap, route mapping, errors) go through the same pino logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.write(context !== undefined && NEST_WIRING.has(context) ? 'debug' : 'info', message, context);
  }
  error(message: unknown, trace?: string, context?: string): void {
    if (typeof message === 'object' && message !== null) this.logger.error({ context, trace, ...message });
    else this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace', message: unknown, context?: string): void {
    if (typeof message === 'object' && message !== null) this.logger[level]({ context, ...message });
    else this.logger[level]({ context }, String(message));
  }
}

export type { LevelWithSilent, Logger } from 'pino';
