import { ClientRequest, IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LookupFunction, Socket } from 'node:net';
import { DestinationPolicy, DestinationRefused, isPublicAddress, resolveDestination } from './destination';

/** Most bytes of a receiver's answer that are read; the rest is never downloaded. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** How much of a failed answer's body the delivery log keeps. */
const ERROR_BODY_CHARS = 200;

interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** One attempt's outcome: a 2xx (`delivered`), or what went wrong. */
interface AttemptResult {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Response bytes read (never more than MAX_RESPONSE_BYTES). */
  responseBytes: number;
}

const printable = (text: string): string =>
  text
    .toWellFormed()
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim();

/**
 * POSTs one webhook. The destination is resolved and checked first (resolveDestination), then the
 * connection is pinned to the checked address through the request's `lookup`, so the HTTP client
 * never asks DNS again; the connected peer is checked once more before a byte is sent. No redirect
 * is followed (a 3xx is a failure), no connection is reused, the whole attempt — connect, answer
 * and body — has `timeoutMs`, and at most MAX_RESPONSE_BYTES of the answer are read. Never throws.
 */
export async function sendWebhook(
  request: WebhookRequest,
  policy: DestinationPolicy,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  let destination;
  try {
    destination = await resolveDestination(request.url, policy);
  } catch (error) {
    const message = error instanceof DestinationRefused ? error.message : String(error);
    return {
      delivered: false,
      statusCode: null,
      error: `refused: ${message}`,
      durationMs: elapsed(),
      responseBytes: 0,
    };
  }
  const { url, address, family } = destination;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const remaining = Math.max(1, request.timeoutMs - elapsed());

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let responseBytes = 0;
    const chunks: Buffer[] = [];
    const finish = (error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outgoing.destroy();
      const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
      let reason = error;
      if (!delivered && statusCode !== null) {
        const body = printable(Buffer.concat(chunks).toString('utf8')).slice(0, ERROR_BODY_CHARS);
        const redirect = statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : '';
        reason = `HTTP ${statusCode}${redirect}${body ? `: ${body}` : ''}`;
      }
      resolve({
        delivered,
        statusCode,
        error: delivered ? null : (reason ?? 'no answer'),
        durationMs: elapsed(),
        responseBytes,
      });
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing: ClientRequest = send(url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
      agent: false,
      // The Host header and the TLS server name stay the URL's: the certificate is checked for it.
      lookup: pinned,
    });
    const deadline = setTimeout(
      () => finish(statusCode === null ? `no answer within ${request.timeoutMs} ms` : null),
      remaining,
    );
    outgoing.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        const peer = socket.remoteAddress ?? '';
        if (!policy.allowPrivateNetworks && !isPublicAddress(peer)) {
          outgoing.destroy(new DestinationRefused(`connected to ${peer}, a private address`, 'address'));
        }
      });
    });
    outgoing.on('response', (response: IncomingMessage) => {
      statusCode = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        const room = MAX_RESPONSE_BYTES - responseBytes;
        const kept = chunk.subarray(0, room);
        responseBytes += kept.length;
        if (chunks.length < 4) chunks.push(kept);
        if (responseBytes >= MAX_RESPONSE_BYTES) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
      response.on('close', () => finish(null));
    });
    outgoing.on('error', (error: Error) => {
      const refused = error instanceof DestinationRefused ? 'refused: ' : '';
      finish(`${refused}${printable(error.message).slice(0, ERROR_BODY_CHARS) || error.name}`);
    });
    outgoing.end(request.body);
  });
}
