import {
  ArgumentsHost,
  Catch,
  CallHandler,
  Controller,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  RpcExceptionFilter,
  UseFilters,
  UseInterceptors,
  applyDecorators,
} from '@nestjs/common';
import { MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import { MessageDefinition } from '@licensing/contracts';
import { Observable, throwError } from 'rxjs';
import { DomainError, createValidationPipe } from '@licensing/shared/errors';
import { CredentialReach, requestContext } from '@licensing/shared/logging';
import { toBusError } from './direct-dispatch';
import { BusEnvelope, contextOfEnvelope } from './envelope';

/**
 * Answers every failure of a handler as a SerializedError (`toBusError`). Nest's stock RPC filter
 * would turn a domain error into "Internal server error" and lose its status.
 */
@Catch()
export class BusExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    const error = toBusError(exception);
    return throwError(() => error);
  }
}

/**
 * Runs the handler inside the caller's request context, so its logs and onward calls carry the
 * request id, and the changes it makes are audited under the caller's API key.
 */
@Injectable()
export class BusContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const rpc = context.switchToRpc();
    const store = contextOfEnvelope(
      rpc.getData<Partial<BusEnvelope>>(),
      rpc.getContext<NatsContext>().getSubject(),
    );
    return new Observable((subscriber) =>
      requestContext.run(store, () => next.handle().subscribe(subscriber)),
    );
  }
}

/**
 * A controller of bus handlers: typed errors out, request context in. Its `@Handles()` methods are
 * served by direct dispatch (direct-dispatch.ts), which does the same with the same functions;
 * the filter and interceptor declared here serve whatever still takes Nest's path.
 */
export function BusController(): ClassDecorator {
  return applyDecorators(
    Controller(),
    UseFilters(BusExceptionFilter),
    UseInterceptors(BusContextInterceptor),
  );
}

/** The validated payload of a bus request, checked with the same DTO class the gateway uses for HTTP. */
export const BusData = (): ParameterDecorator => Payload('data', createValidationPipe());

/** The organization a bus request acts for; a request without one is a programming error. */
export const BusOrg = (): ParameterDecorator =>
  Payload('ctx', {
    transform(ctx: BusEnvelope['ctx'] | undefined): string {
      if (!ctx?.org_id) throw new DomainError('internal', 'Bus request carries no organization');
      return ctx.org_id;
    },
  });

/** A request made without a credential (a sweep, another service): the organization, not as admin. */
const NO_CREDENTIAL: CredentialReach = { kind: 'organization', admin: false };

/**
 * What the caller's credential reaches: the whole organization for an API key, one license for a
 * license token, one activation for a machine token. Handlers answer anything outside it exactly as
 * they answer another organization's resources.
 */
export const BusReach = (): ParameterDecorator =>
  Payload('ctx', {
    transform: (ctx: BusEnvelope['ctx'] | undefined): CredentialReach => ctx?.reach ?? NO_CREDENTIAL,
  });

/** The type of a function's last parameter: a bus handler's request, read by `@BusData()`. */
type LastParameter<Method> = Method extends (...args: infer Params) => unknown
  ? Params extends [...unknown[], infer Last]
    ? Last
    : never
  : never;

/**
 * True when A and B are the same type. Assignable both ways is not enough: a handler typed with
 * a page query would accept a list query that adds optional filters, and validate it with the
 * wrong class.
 */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * Nothing when the handler's request parameter is the message's request type; otherwise a member
 * no descriptor has, so the decorator does not compile.
 */
type RequestParameterCheck<Method, Request> =
  Same<LastParameter<Method>, Request> extends true ? unknown : { requestParameterMustBe: Request };

/**
 * Declares the handler of a message. Its last parameter, `@BusData()`, must be the message's
 * request type, which is validated on receipt with that class; and it must answer the message's
 * reply type. So the handler and every caller's `bus.send(message, …)` agree on both at compile
 * time.
 */
export function Handles<Request, Reply>(message: MessageDefinition<Request, Reply>) {
  return <Method extends (...args: never[]) => Reply | Promise<Reply>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<Method> & RequestParameterCheck<Method, Request>,
  ): void => {
    MessagePattern(message.subject)(target, key, descriptor);
  };
}
