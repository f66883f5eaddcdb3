import { HttpStatus, RequestMethod } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply, FastifyRequest } from 'fastify';
import { createValidationPipe } from '@licensing/shared/errors';
import { requestContext } from '@licensing/shared/logging';
import { JsonText } from '@licensing/shared/messaging';
import { inRequestSpan, tracing } from '@licensing/shared/tracing';
import { authorize } from '../identity/authorization';
import { OrganizationLimitsService } from '../identity/organization-limits.service';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/request-fingerprint';
import { ResponseKeysService } from '../signed-answers/response-keys.service';
import { SIGNATURE_HEADER, nonceOf, signAnswer } from '../signed-answers/signed-answer';
import { answerFailure } from './problem.filter';
import { contextOf } from './request-context.interceptor';
import { DirectParam, DirectTarget } from '../http/direct';

/**
 * Adds the preHandler that serves `@Direct()` routes. Registered after every other preHandler
 * (the per-license rate limit), so a direct route has been through all of them when it runs.
 */
export function registerDirectRoutes(app: NestFastifyApplication): void {
  const validation = createValidationPipe();
  const responseKeys = app.get(ResponseKeysService);
  const organizations = app.get(OrganizationLimitsService);
  type Handler = { call: (...args: unknown[]) => Promise<unknown>; status: number };
  const handlers = new Map<DirectTarget, Handler>();
  const handlerOf = (target: DirectTarget) => {
    let handler = handlers.get(target);
    if (!handler) {
      const controller = app.get(target.controller) as Record<
        string,
        (...args: unknown[]) => Promise<unknown>
      >;
      const method = controller[target.method];
      handler = { call: method.bind(controller), status: statusOf(method) };
      handlers.set(target, handler);
    }
    return handler;
  };
  // Nest's order: the global validation pipe, then the parameter's own pipes.
  const argumentsOf = async (request: FastifyRequest, params: DirectParam[]): Promise<unknown[]> => {
    const args: unknown[] = [];
    for (const { index, from, name, pipes, metatype } of params) {
      const raw = from === 'body' ? (request.body ?? {}) : (request.params as Record<string, string>)[name!];
      const metadata = { type: from, metatype, data: name } as const;
      let value: unknown = await validation.transform(raw, metadata);
      for (const pipe of pipes) value = await pipe.transform(value, metadata);
      args[index] = value;
    }
    return args;
  };

  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const config = request.routeOptions.config;
      const target = config?.direct;
      if (!target) return;
      if (config.idempotent && request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined) return;
      try {
        await authorize(request, organizations);
        // A signed answer is asked for with a nonce: checked, and the key found, before the handler
        // runs, so a bad nonce or a missing key leaves no effect (a sync stores its report).
        const nonce = config.signed_answer ? nonceOf(request.headers['licensing-nonce']) : undefined;
        const orgId = request.auth!.orgId;
        const signer =
          nonce === undefined
            ? undefined
            : (responseKeys.cached(orgId) ?? (await responseKeys.signer(orgId)));
        const args = await argumentsOf(request, target.params);
        const { call, status } = handlerOf(target);
        const store = contextOf(request);
        // Traced, the request's span is the active one for the bus requests the handler makes.
        const result = await (tracing.enabled
          ? inRequestSpan(request, () => requestContext.run(store, () => call(...args)))
          : requestContext.run(store, () => call(...args)));
        void reply.code(status);
        // A forwarded answer (`BusClient.forward`) is the service's JSON text, sent as it came.
        const forwarded = result instanceof JsonText;
        if (!signer && !forwarded) return reply.send(result);
        // Serialized here, as Fastify would serialize the object, so the signature covers the bytes sent.
        const body = forwarded ? result.text : JSON.stringify(result);
        if (signer) void reply.header(SIGNATURE_HEADER, signAnswer(body, signer, nonce!, new Date()));
        return reply.type('application/json; charset=utf-8').send(body);
      } catch (error) {
        answerFailure(request, reply, error);
        return reply;
      }
    });
}

/** The status Nest would answer a method's success with: its `@HttpCode`, else 201 for a POST, else 200. */
function statusOf(method: object): number {
  const declared = Reflect.getMetadata(HTTP_CODE_METADATA, method) as number | undefined;
  if (declared !== undefined) return declared;
  const verb = Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod | undefined;
  return verb === RequestMethod.POST ? HttpStatus.CREATED : HttpStatus.OK;
}
