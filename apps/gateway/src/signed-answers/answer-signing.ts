import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  UseInterceptors,
  applyDecorators,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { AddRouteConfig } from '../http/route-config';
import { ResponseKeysService } from './response-keys.service';
import { AnswerSigner, NONCE_HEADER, SIGNATURE_HEADER, nonceOf, signAnswer } from './signed-answer';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `@SignedAnswer()`: a request with `Licensing-Nonce` gets a `Licensing-Signature`. */
    signed_answer?: boolean;
  }
  interface FastifyRequest {
    /** Set before the handler runs when the request asked for a signed answer. */
    answerSigning?: { nonce: string; signer: AnswerSigner };
  }
}

/**
 * A route whose `200` answer is signed when the request carries `Licensing-Nonce`. The nonce is
 * checked and the organization's key found before the handler runs (by `SignedAnswerInterceptor`,
 * or by the direct route's preHandler), so a bad nonce or a missing key leaves no effect. The
 * `onSend` hook of `registerAnswerSignatures` signs the bytes sent, whichever path produced them.
 */
export const SignedAnswer = (): MethodDecorator =>
  applyDecorators(
    AddRouteConfig({ signed_answer: true }),
    UseInterceptors(SignedAnswerInterceptor),
    ApiHeader({
      name: 'Licensing-Nonce',
      required: false,
      description:
        'A fresh random value (8 to 128 characters of `A-Z a-z 0-9 . _ ~ + / = -`): the `200` answer then ' +
        "carries `Licensing-Signature`, a JWS with detached payload over the body, signed with the organization's " +
        'response key (`GET /organizations/current/response-keys`), with this nonce and the time in its header',
    }),
  );

/** Reads the request's nonce (`400` when malformed) and finds the key that will sign the answer. */
export async function prepareSignedAnswer(
  request: FastifyRequest,
  responseKeys: ResponseKeysService,
): Promise<void> {
  const nonce = nonceOf(request.headers[NONCE_HEADER]);
  if (nonce === undefined) return;
  const orgId = request.auth!.orgId;
  const signer = responseKeys.cached(orgId) ?? (await responseKeys.signer(orgId));
  request.answerSigning = { nonce, signer };
}

/** `@SignedAnswer()` on Nest's pipeline: runs after the guards, before the pipes and the handler. */
@Injectable()
export class SignedAnswerInterceptor implements NestInterceptor {
  constructor(private readonly responseKeys: ResponseKeysService) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    await prepareSignedAnswer(context.switchToHttp().getRequest<FastifyRequest>(), this.responseKeys);
    return next.handle();
  }
}

/** Signs a `200` answer's bytes, as sent, for a request that asked for it. */
export function registerAnswerSignatures(fastify: FastifyInstance): void {
  fastify.addHook(
    'onSend',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => {
      const signing = request.answerSigning;
      if (signing && reply.statusCode === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        void reply.header(SIGNATURE_HEADER, signAnswer(payload, signing.signer, signing.nonce, new Date()));
      }
      done(null, payload);
    },
  );
}
