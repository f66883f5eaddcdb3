import { LicenseStatusRecord, PUSHED_LICENSE_EVENTS, PushedLicenseEvent } from '@licensing/contracts';

/**
 * The Server-Sent Events wire format and the pure rules of the license event stream, apart from
 * the hub that holds the connections (license-event-hub.ts).
 */

/** One event as the text/event-stream format writes it. `data` is JSON: one line, never a bare newline. */
export function sseFrame(event: string, id: number, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: ignored by every client, it keeps proxies and NATs from closing an idle connection. */
export const SSE_HEARTBEAT = ':\n\n';

/**
 * Where a reconnecting client stands: the stream sequence of the last event it saw. Undefined
 * when it sends none (a first connection); NaN when it sends something else, which the hub
 * answers with a `reset` rather than a 400 (an EventSource would retry a 400 for ever).
 */
export function lastEventIdOf(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  return /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
}

/** The distinct serials of the query, in order. */
export const serialsOf = (query: string): string[] => [...new Set(query.split(','))];

/** What a connection receives of a license event, or undefined for an event that is not pushed. */
export function pushedView(
  type: string,
  occurredAt: string,
  data: LicenseStatusRecord,
):
  | {
      type: PushedLicenseEvent;
      serial: string;
      status: string;
      occurred_at: string;
      revoked_at: string | null;
      valid_until: string | null;
    }
  | undefined {
  if (!(PUSHED_LICENSE_EVENTS as readonly string[]).includes(type)) return undefined;
  return {
    type: type as PushedLicenseEvent,
    serial: data.serial,
    status: data.status,
    occurred_at: occurredAt,
    revoked_at: data.revoked_at ?? null,
    valid_until: data.valid_until ?? null,
  };
}
