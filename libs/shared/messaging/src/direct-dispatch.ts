import { Logger, PipeTransform, Type } from '@nestjs/common';
import { INestApplication } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants';
import { ApplicationConfig, ModulesContainer } from '@nestjs/core';
import { PARAM_ARGS_METADATA, PATTERN_METADATA } from '@nestjs/microservices/constants';
import { RpcParamtype } from '@nestjs/microservices/enums/rpc-paramtype.enum';
import { SerializedError, isConnectionLost, toDomainError } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { BusEnvelope, contextOfEnvelope } from './envelope';

/** What a handler answers, in the reply packet of Nest's NATS transport. */
export type HandlerAnswer = { response: unknown } | { err: SerializedError };

/** Runs one handler for one request envelope, the way Nest's RPC pipeline would. */
export type DirectHandler = (
  envelope: Partial<BusEnvelope> | undefined,
  subject: string,
) => Promise<HandlerAnswer>;

const logger = new Logger('Bus');

/**
 * A failure as it crosses the bus: a DomainError keeps its code and status; anything unexpected is
 * logged and answered `internal`, its details hidden. A lost database connection is answered 503
 * like any unavailable backing service, and logged as a warning.
 */
export function toBusError(exception: unknown): SerializedError {
  const known = toDomainError(exception);
  if (isConnectionLost(exception)) {
    logger.warn({ msg: 'database connection lost under a request', err: String(exception) });
  }
  if (known) return known.toJSON();
  logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
  return { code: 'internal', status: 500, message: 'Internal error' };
}

interface ParamSpec {
  index: number;
  /** The member of the envelope the parameter reads (`data`, `ctx`). */
  member: 'data' | 'ctx';
  pipes: PipeTransform[];
  metatype: unknown;
}

/**
 * The handlers of every `@Handles()` method of the application's controllers, by subject, called
 * without Nest's RPC pipeline (its router, rxjs streams, interceptor and filter contexts cost as much
 * CPU as the work of a hot handler; bench/README.md). Each does what `BusController()` declares,
 * with the same functions: the caller's request context around the call, the parameters read from
 * the envelope through their own pipes (`@BusData()`'s validation pipe, `@BusOrg()`, `@BusReach()`), and a failure
 * answered as `toBusError` makes it. A handler whose parameters are anything else fails the boot.
 */
export function directHandlers(app: INestApplication): Map<string, DirectHandler> {
  assertNoGlobalEnhancers(app);
  const handlers = new Map<string, DirectHandler>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const instance = wrapper.instance as Record<string | symbol, unknown> | undefined;
      const controller = wrapper.metatype as Type | null;
      if (!instance || !controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const method = prototype[key];
        if (typeof method !== 'function') continue;
        const patterns = Reflect.getMetadata(PATTERN_METADATA, method) as unknown[] | undefined;
        if (!patterns) continue;
        const handler = directHandler(instance, controller, key);
        for (const pattern of patterns) if (typeof pattern === 'string') handlers.set(pattern, handler);
      }
    }
  }
  return handlers;
}

/** What `BusController()` declares; anything else a controller or handler declares would be skipped, so it fails the boot. */
const ENHANCERS_ALLOWED: Record<string, string[]> = {
  [GUARDS_METADATA]: [],
  [PIPES_METADATA]: [],
  [INTERCEPTORS_METADATA]: ['BusContextInterceptor'],
  [EXCEPTION_FILTERS_METADATA]: ['BusExceptionFilter'],
};

/**
 * The application's global guards, pipes, interceptors and filters (`APP_*`, `useGlobal*`): what
 * a path that skips Nest's pipeline must either do itself or refuse.
 */
export function globalEnhancers(app: INestApplication): object[] {
  const config = (app as unknown as { config: ApplicationConfig }).config;
  return [
    ...config.getGlobalGuards(),
    ...config.getGlobalPipes(),
    ...config.getGlobalInterceptors(),
    ...config.getGlobalFilters(),
    ...config.getGlobalRequestGuards(),
    ...config.getGlobalRequestPipes(),
    ...config.getGlobalRequestInterceptors(),
    ...config.getGlobalRequestFilters(),
  ] as object[];
}

/** A global guard, pipe, interceptor or filter would be skipped too. */
function assertNoGlobalEnhancers(app: INestApplication): void {
  if (globalEnhancers(app).length > 0) {
    throw new Error(
      'bus handlers are dispatched directly; global guards, pipes, interceptors and filters would never run',
    );
  }
}

function assertNothingSkipped(controller: Type, key: string): void {
  for (const [metadata, allowed] of Object.entries(ENHANCERS_ALLOWED)) {
    const declared = [
      ...((Reflect.getMetadata(metadata, controller) ?? []) as Array<{ name?: string }>),
      ...((Reflect.getMetadata(metadata, controller.prototype[key as keyof object]) ?? []) as Array<{
        name?: string;
      }>),
    ];
    const extra = declared.filter((enhancer) => !allowed.includes(enhancer?.name ?? ''));
    if (extra.length > 0) {
      throw new Error(
        `${controller.name}.${key}: bus handlers are dispatched directly; ` +
          `${extra.map((e) => e?.name ?? String(e)).join(', ')} would never run`,
      );
    }
  }
}

function directHandler(instance: Record<string, unknown>, controller: Type, key: string): DirectHandler {
  assertNothingSkipped(controller, key);
  const params = paramsOf(controller, key);
  const method = (instance[key] as (...args: unknown[]) => unknown).bind(instance);
  return async (envelope, subject) => {
    return requestContext.run(contextOfEnvelope(envelope, subject), async () => {
      try {
        const args: unknown[] = [];
        for (const param of params) {
          let value: unknown = envelope?.[param.member];
          for (const pipe of param.pipes) {
            value = await pipe.transform(value, {
              type: 'body',
              metatype: param.metatype as Type,
              data: param.member,
            });
          }
          args[param.index] = value;
        }
        return { response: await method(...args) };
      } catch (exception) {
        return { err: toBusError(exception) };
      }
    });
  };
}

function paramsOf(controller: Type, key: string): ParamSpec[] {
  const metadata = (Reflect.getMetadata(PARAM_ARGS_METADATA, controller, key) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: PipeTransform[] }
  >;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, key) ?? []) as unknown[];
  return Object.entries(metadata).map(([slot, { index, data, pipes = [] }]) => {
    if (!slot.startsWith(`${RpcParamtype.PAYLOAD}:`) || (data !== 'data' && data !== 'ctx')) {
      throw new Error(
        `${controller.name}.${key}: a bus handler takes only @BusOrg(), @BusReach() and @BusData() parameters`,
      );
    }
    return { index, member: data, pipes, metatype: types[index] };
  });
}
