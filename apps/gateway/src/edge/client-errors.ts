import { Socket } from 'node:net';

const REFUSALS: Record<string, { status: number; title: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    title: 'Request Header Fields Too Large',
    detail: 'The request line and headers are larger than 16 KiB',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request Timeout',
    detail: 'The request was not received in time',
  },
};
const MALFORMED = { status: 400, title: 'Bad Request', detail: 'The request is not valid HTTP' };

/**
 * What Node's HTTP parser refuses before Fastify sees a request (a request line and headers over
 * its 16 KiB, bytes that are not HTTP, a request that never finishes arriving): answered in
 * problem+json like every other refusal, where Fastify's default writes its own JSON shape, and
 * the connection closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, title, detail } = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ type: 'about:blank', title, status, code: 'validation_failed', detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
