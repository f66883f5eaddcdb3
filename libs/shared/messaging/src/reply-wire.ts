import type { HandlerAnswer } from './direct-dispatch';

/**
 * The JSON text of a reply, passed through as received: what `BusClient.forward` answers, so that
 * a gateway can send a service's answer to its client without parsing it and serializing it
 * again. `Reply` is what the text holds.
 */
export class JsonText<Reply> {
  declare private readonly reply?: Reply;

  constructor(readonly text: string) {}
}

const RESPONSE_PREFIX = '{"response":';

/**
 * A direct handler's reply in Nest's NATS wire format, `response` (or `err`) first: written this
 * way so that `responseTextOf` can take the response out without parsing it.
 */
export function encodeReply(answer: HandlerAnswer, id: unknown): string {
  return JSON.stringify({ ...answer, isDisposed: true, id });
}

/**
 * The JSON text of a successful reply's `response`, cut out of the reply when it has exactly the
 * shape `encodeReply` writes for request `id`; undefined for anything else (an error, Nest's own
 * serialization, a response that is undefined), which the caller parses instead.
 */
export function responseTextOf(reply: string, id: string): string | undefined {
  const suffix = `,"isDisposed":true,"id":${JSON.stringify(id)}}`;
  if (!reply.startsWith(RESPONSE_PREFIX) || !reply.endsWith(suffix)) return undefined;
  return reply.slice(RESPONSE_PREFIX.length, reply.length - suffix.length);
}
