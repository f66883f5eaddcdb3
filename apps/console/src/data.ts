// Pure data shaping for the console's pages: no DOM, no fetch, so that jest checks it alone.

/** An RFC 9457 problem as the API answers it (`application/problem+json`). */
export interface Problem {
  status?: number;
  title?: string;
  detail?: string;
  code?: string;
  errors?: { field?: string; message?: string }[];
}

/**
 * What to tell the user about a failed request: the problem's `detail` (what the API says went
 * wrong), each invalid field, and for a refused key what to do about it.
 */
export function problemMessage(status: number, body: unknown): string {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Problem;
  const detail = problem.detail || problem.title || `The API answered ${status}`;
  const fields = (problem.errors ?? [])
    .filter((error) => error.message)
    .map((error) => (error.field ? `${error.field}: ${error.message}` : error.message));
  const text = fields.length > 0 ? `${detail} (${fields.join('; ')})` : detail;
  switch (status) {
    case 401:
      return `This API key was refused: ${text}. Sign in again with a valid key.`;
    case 403:
      return `Not allowed with this API key: ${text}`;
    case 429:
      return `Too many requests: ${text}`;
    default:
      return text;
  }
}

/**
 * The problem's invalid fields, each with its first message: `features.1` is also filed under
 * `features`, the form's field.
 */
export function problemFields(body: unknown): Record<string, string> {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Problem;
  const fields: Record<string, string> = {};
  for (const { field, message } of problem.errors ?? []) {
    if (!field || !message) continue;
    for (const name of [field, field.split('.')[0]!]) fields[name] ??= message;
  }
  return fields;
}

export interface PageInfo {
  page: number;
  pages: number;
  /** 1-based positions of the first and last item shown; 0 and 0 for an empty list. */
  first: number;
  last: number;
  hasPrevious: boolean;
  hasNext: boolean;
}

/** Where a page of a server-side paginated list stands, from the list's `total`. */
export function pageInfo(page: number, perPage: number, total: number): PageInfo {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const first = total === 0 ? 0 : Math.min(total, (page - 1) * perPage + 1);
  const last = Math.min(total, page * perPage);
  return { page, pages, first, last: Math.max(first, last), hasPrevious: page > 1, hasNext: page < pages };
}

/** A query string of the non-empty values, in the order given. */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export const RANGES = ['24h', '7d', '30d'] as const;
export type RangeKey = (typeof RANGES)[number];
export type Interval = 'hour' | 'day';

export interface TimeRange {
  key: RangeKey;
  from: Date;
  to: Date;
  interval: Interval;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * A range ending with the current UTC hour (24 h, hourly buckets) or day (7 and 30 days, daily
 * buckets), aligned on bucket starts the way the analytics service counts them.
 */
export function timeRange(key: RangeKey, now: Date): TimeRange {
  const interval: Interval = key === '24h' ? 'hour' : 'day';
  const size = interval === 'hour' ? HOUR : DAY;
  const to = new Date(Math.floor(now.getTime() / size) * size + size);
  const count = key === '24h' ? 24 : key === '7d' ? 7 : 30;
  return { key, from: new Date(to.getTime() - count * size), to, interval };
}

export interface UsageBucket {
  bucket: string;
  syncs: number;
  licenses: number;
  fingerprints: number;
  peak_seats_in_use: number | null;
}

/** uPlot's data: x in Unix seconds, then one array per series. */
export type ChartData = [number[], ...number[][]];

/**
 * The syncs and distinct licenses of every bucket of the range, zeros included: the API lists only
 * the buckets that have reports, a chart needs them all.
 */
export function usageSeries(buckets: UsageBucket[], range: Pick<TimeRange, 'from' | 'to' | 'interval'>) {
  const size = range.interval === 'hour' ? HOUR : DAY;
  const byStart = new Map(buckets.map((b) => [Date.parse(b.bucket), b]));
  const xs: number[] = [];
  const syncs: number[] = [];
  const licenses: number[] = [];
  for (let at = range.from.getTime(); at < range.to.getTime(); at += size) {
    const bucket = byStart.get(at);
    xs.push(at / 1000);
    syncs.push(bucket?.syncs ?? 0);
    licenses.push(bucket?.licenses ?? 0);
  }
  return { data: [xs, syncs, licenses] as ChartData, total: syncs.reduce((sum, n) => sum + n, 0) };
}

/**
 * A license's syncs and machines per UTC day over the last `days` days, from the usage API's
 * `daily` (which leaves out days without a sync: those are zeros here).
 */
export function dailyUsageSeries(
  daily: { day: string; syncs: number; machines: number }[],
  now: Date,
  days = 30,
): ChartData {
  const to = timeRange('30d', now).to.getTime();
  const from = to - days * DAY;
  const byDay = new Map(daily.map((entry) => [Date.parse(`${entry.day}T00:00:00.000Z`), entry]));
  const xs: number[] = [];
  const syncs: number[] = [];
  const machines: number[] = [];
  for (let at = from; at < to; at += DAY) {
    xs.push(at / 1000);
    syncs.push(byDay.get(at)?.syncs ?? 0);
    machines.push(byDay.get(at)?.machines ?? 0);
  }
  return [xs, syncs, machines];
}

/** The largest count first, as the share of the biggest (for bar widths), at most `limit` rows. */
export function topShares<T extends { count: number }>(rows: T[], limit = 8): (T & { share: number })[] {
  const top = [...rows].sort((a, b) => b.count - a.count).slice(0, limit);
  const max = top[0]?.count ?? 0;
  return top.map((row) => ({ ...row, share: max === 0 ? 0 : row.count / max }));
}

/** Comma- or space-separated words, trimmed, without empties or repeats. */
export function wordList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** A timestamp as the user reads it: local date and time to the minute; "—" for none. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The API's bounds on an organization's `checkout_ttl_seconds`: 1 hour to 365 days. */
export const MIN_CHECKOUT_TTL_SECONDS = HOUR / 1000;
export const MAX_CHECKOUT_TTL_SECONDS = (365 * DAY) / 1000;

export type DurationUnit = 'days' | 'hours';
const UNIT_SECONDS: Record<DurationUnit, number> = { days: DAY / 1000, hours: HOUR / 1000 };

/** A number with at most `digits` decimals, without trailing zeros. */
const trimmed = (value: number, digits: number): string => String(Number(value.toFixed(digits)));

/** A lifetime in days as the user reads it: "30 days", "1 day", "1.5 days (36 hours)". */
export function formatDays(seconds: number): string {
  const days = seconds / UNIT_SECONDS.days;
  if (Number.isInteger(days)) return `${days} ${days === 1 ? 'day' : 'days'}`;
  const hours = seconds / UNIT_SECONDS.hours;
  return `${trimmed(days, 2)} days (${trimmed(hours, 2)} ${hours === 1 ? 'hour' : 'hours'})`;
}

/** How a lifetime is edited: in whole days when it is some, else in hours. */
export function durationInput(seconds: number): { amount: string; unit: DurationUnit } {
  return seconds % UNIT_SECONDS.days === 0
    ? { amount: String(seconds / UNIT_SECONDS.days), unit: 'days' }
    : { amount: trimmed(seconds / UNIT_SECONDS.hours, 4), unit: 'hours' };
}

/** An edited file lifetime in whole seconds, or why it cannot be one (1 hour to 365 days). */
export function checkoutTtl(amount: string, unit: DurationUnit): { seconds: number } | { error: string } {
  const value = Number(amount.trim());
  if (amount.trim() === '' || !Number.isFinite(value)) return { error: 'Enter a number of days or hours.' };
  const seconds = Math.round(value * UNIT_SECONDS[unit]);
  if (seconds < MIN_CHECKOUT_TTL_SECONDS || seconds > MAX_CHECKOUT_TTL_SECONDS)
    return { error: 'The lifetime must be between 1 hour and 365 days.' };
  return { seconds };
}

/**
 * A `datetime-local` value (the user's local time) as the API's ISO instant; empty is no expiry.
 * Only a time still to come is an expiry.
 */
export function expiryInstant(value: string, now: Date): { iso?: string } | { error: string } {
  if (value.trim() === '') return {};
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return { error: 'The expiry is not a date and time.' };
  if (date.getTime() <= now.getTime()) return { error: 'The expiry must be in the future.' };
  return { iso: date.toISOString() };
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** An instant as a `datetime-local` value: the user's local time, to the minute; '' for none. */
export function localDateTime(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** What the license edit form changes, as the API names it. */
export interface EditableLicense {
  customer_email: string | null;
  customer_id: string | null;
  valid_until: string | null;
  max_seats: number;
  features: string[];
}

/** The license edit form's fields, as typed. */
export type LicenseEdit = Record<
  'customer_email' | 'customer_id' | 'valid_until' | 'max_seats' | 'features',
  string
>;

export function licenseEdit(license: EditableLicense): LicenseEdit {
  return {
    customer_email: license.customer_email ?? '',
    customer_id: license.customer_id ?? '',
    valid_until: localDateTime(license.valid_until),
    max_seats: String(license.max_seats),
    features: license.features.join(', '),
  };
}

/**
 * The `PATCH /licenses/:id` body for an edit: only the fields that changed. An emptied customer
 * or end is `null` (no customer, no end). Or, when the form holds something the API would refuse
 * for sure, the message per field.
 */
export function licenseChanges(
  license: EditableLicense,
  form: LicenseEdit,
): { changes: Partial<EditableLicense> } | { errors: Partial<LicenseEdit> } {
  const before = licenseEdit(license);
  const changes: Partial<EditableLicense> = {};
  const errors: Partial<LicenseEdit> = {};
  if (form.customer_email.trim() !== before.customer_email)
    changes.customer_email = form.customer_email.trim() || null;
  if (form.customer_id.trim() !== before.customer_id) changes.customer_id = form.customer_id.trim() || null;
  if (form.valid_until !== before.valid_until) {
    const until = form.valid_until.trim() === '' ? null : new Date(form.valid_until);
    if (until && Number.isNaN(until.getTime()))
      errors.valid_until = 'Enter a date and time, or leave it empty.';
    else changes.valid_until = until?.toISOString() ?? null;
  }
  if (form.max_seats.trim() !== before.max_seats) {
    const seats = Number(form.max_seats.trim());
    if (!Number.isInteger(seats) || seats < 1) errors.max_seats = 'Enter a whole number of seats, 1 or more.';
    else changes.max_seats = seats;
  }
  const features = wordList(form.features);
  if (features.join(',') !== license.features.join(',')) changes.features = features;
  return Object.keys(errors).length > 0 ? { errors } : { changes };
}

/** A relay request's site and public key, as `licensing-relay init` writes them. */
export interface RelayRequest {
  site: string;
  public_key: string;
}

/**
 * The site and public key of a pasted relay request (`{"kind": "relay_request", "site": …,
 * "public_key": …}`), or why the text is not one. Any JSON object with both strings is taken.
 */
export function parseRelayRequest(text: string): RelayRequest | { error: string } {
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch {
    return { error: 'The relay request is not JSON. Paste the whole file licensing-relay init wrote.' };
  }
  const { kind, site, public_key } = (
    typeof request === 'object' && request !== null ? request : {}
  ) as Record<string, unknown>;
  if (
    (kind !== undefined && kind !== 'relay_request') ||
    typeof site !== 'string' ||
    typeof public_key !== 'string'
  )
    return { error: 'This JSON is not a relay request: it needs a site and a public_key.' };
  return { site, public_key };
}

/** The relay file form's fields, as typed. */
export interface RelayFileForm {
  request: string;
  site: string;
  public_key: string;
  ttl: string;
  unit: DurationUnit;
}

/**
 * The `POST /licenses/:id/relay-files` body of the form: its site and public key (filled from a
 * pasted request, or typed), and the lifetime when one is given (empty: the organization's). Or,
 * when a field is empty or out of range, the message per field, named as the API names them.
 */
export function relayFileBody(
  form: RelayFileForm,
): { body: { site: string; public_key: string; ttl_seconds?: number } } | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  if (form.request.trim() !== '') {
    const request = parseRelayRequest(form.request);
    if ('error' in request) errors['request'] = request.error;
  }
  if (form.site.trim() === '') errors['site'] = 'Enter the relay site, or paste the relay request.';
  if (form.public_key.trim() === '')
    errors['public_key'] = "Paste the relay's public key (PEM), or its relay request.";
  let ttl_seconds: number | undefined;
  if (form.ttl.trim() !== '') {
    const ttl = checkoutTtl(form.ttl, form.unit);
    if ('error' in ttl) errors['ttl_seconds'] = ttl.error;
    else ttl_seconds = ttl.seconds;
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    body: {
      site: form.site.trim(),
      public_key: form.public_key,
      ...(ttl_seconds === undefined ? {} : { ttl_seconds }),
    },
  };
}

/** The bytes of a base64 file (a relay file's `relay_file`), to save as it is. */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
