// The application's online side: validate, seats (activate, heartbeat, deactivate), revocation
// checks and sync, over fetch only, with timeouts, retries and a last-known status that carries
// the application through an outage for a configurable grace period. It authenticates with the
// license's token (or a client API key), and its seat's calls with the seat's machine token.
import { Heartbeat } from './heartbeat';
import {
  LicenseClientError,
  asClientError,
  fetchOf,
  parseJson,
  problemOf,
  send,
  type Endpoint,
} from './request';

export { LicenseClientError };

/**
 * How the service last described the license, in one vocabulary (validate's codes, lowercased).
 * `ok` and `overage` (more machines than seats, which the license's policy allows) let the
 * application run; every other code stops it.
 */
export type LicenseStatusCode =
  | 'ok'
  | 'overage'
  | 'revoked'
  | 'suspended'
  | 'expired'
  | 'not_found'
  | 'fingerprint_mismatch'
  | 'no_activation'
  | 'heartbeat_dead'
  /** A relay's: this machine holds no lease, and every seat is leased. */
  | 'no_seats'
  | 'components_mismatch'
  | 'overdue'
  | 'entitlements_missing'
  | 'unknown';

/** Whether a status lets the application run. */
export const statusRuns = (status: LicenseStatusCode): boolean => status === 'ok' || status === 'overage';

export interface LicenseState {
  /** May the application run: the last answer was `ok` or `overage`, fresh or within the grace period. */
  valid: boolean;
  status: LicenseStatusCode;
  /** True when the service could not be reached and this is the last-known state. */
  offline: boolean;
  /** When the service last answered (ISO 8601), null if it never has. */
  checked_at: string | null;
  /** Until when a last-known `ok` counts while offline, null if there is none. */
  grace_until: string | null;
  /** The service's explanation, or why it could not be reached. */
  detail: string | null;
}

export interface Activation {
  id: string;
  license_id: string;
  fingerprint: string;
  hostname: string | null;
  platform: string | null;
  components: Record<string, string> | null;
  created_at: string;
  last_heartbeat_at: string | null;
  expires_at: string | null;
}

export interface RevocationResult {
  serial: string;
  status: 'active' | 'revoked' | 'suspended' | 'expired' | 'not_found';
  revoked_at: string | null;
}

export interface SyncReport {
  features_used?: string[];
  seats_in_use?: number;
}

/** This machine's activation as the client keeps it between runs. */
export interface StoredActivation {
  /** The serial it is an activation of. */
  license_key: string;
  activation: Activation;
  /** Its machine token (`mt_…`), null when an API key activated. A secret: keep it like a password. */
  machine_token: string | null;
}

/** Where the last-known state is kept between runs (a file, localStorage, ...). */
export interface LicenseStateStore {
  load(): LicenseState | undefined | null | Promise<LicenseState | undefined | null>;
  save(state: LicenseState): void | Promise<void>;
  /** The activation `saveActivation` kept, so that a restart heartbeats and deactivates without activating. */
  loadActivation?(): StoredActivation | undefined | null | Promise<StoredActivation | undefined | null>;
  /** Called when the activation or its machine token changes; null once the seat is given back. */
  saveActivation?(activation: StoredActivation | null): void | Promise<void>;
}

export interface LicenseClientOptions {
  /** The licensing API, e.g. `https://licensing.example.com`. */
  baseUrl: string;
  /**
   * The license's own token (`lt_…`), which an admin creates with `POST /v1/licenses/:id/tokens`.
   * The recommended credential: it reaches this license only. Give this or `apiKey`, not both.
   */
  licenseToken?: string;
  /**
   * An API key with the `client` scope. Still accepted, but one key is shared by the whole fleet,
   * and an organization can close license actions to it: prefer `licenseToken`.
   */
  apiKey?: string;
  /** The license key: its serial. */
  licenseKey: string;
  /** This machine's fingerprint, for seats and node-locked licenses. */
  fingerprint?: string;
  hostname?: string;
  platform?: string;
  components?: Record<string, string>;
  appVersion?: string;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Further attempts after a network failure, a timeout, a 429 or a 5xx (default 2). */
  retries?: number;
  /** First backoff delay, doubled each retry, with jitter (default 500 ms). */
  retryDelayMs?: number;
  /** How long a last-known `ok` keeps the application running while offline (default 7 days). */
  offlineGracePeriodMs?: number;
  /** Default heartbeat period when the activation does not dictate one (default 5 minutes). */
  heartbeatIntervalMs?: number;
  store?: LicenseStateStore;
  fetch?: typeof fetch;
  /** The clock (for tests). */
  now?: () => number;
}

const DAY_MS = 86_400_000;
const MAX_RETRY_AFTER_MS = 30_000;

export class LicenseClient {
  private readonly options: Required<
    Pick<
      LicenseClientOptions,
      'timeoutMs' | 'retries' | 'retryDelayMs' | 'offlineGracePeriodMs' | 'heartbeatIntervalMs'
    >
  > &
    LicenseClientOptions;
  private readonly endpoint: Endpoint;
  private readonly now: () => number;
  private state: LicenseState | undefined;
  private loaded = false;
  private activation: Activation | undefined;
  private activationLoaded = false;
  /** The activation's machine token. A `#` field, so that inspecting or serialising the client never shows it. */
  #machineToken: string | undefined;
  /** The license token or the API key. */
  readonly #credential: string;
  private readonly heartbeats: Heartbeat;

  constructor(options: LicenseClientOptions) {
    if (!options.baseUrl || !options.licenseKey || !options.licenseToken === !options.apiKey) {
      throw new TypeError(
        'LicenseClient needs baseUrl, licenseKey, and either licenseToken or apiKey (not both)',
      );
    }
    this.#credential = (options.licenseToken ?? options.apiKey)!;
    this.options = {
      timeoutMs: 10_000,
      retries: 2,
      retryDelayMs: 500,
      offlineGracePeriodMs: 7 * DAY_MS,
      heartbeatIntervalMs: 5 * 60_000,
      ...options,
    };
    this.endpoint = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: fetchOf(options.fetch),
      timeoutMs: this.options.timeoutMs,
      peer: 'the licensing service',
    };
    this.now = options.now ?? Date.now;
    this.heartbeats = new Heartbeat({
      beat: () => this.heartbeat(),
      expiresAt: () => this.activation?.expires_at,
      intervalMs: this.options.heartbeatIntervalMs,
      floorMs: 1000,
      now: this.now,
    });
  }

  /**
   * Asks the service whether the license (and, with a fingerprint, this machine's seat) is valid.
   * Never throws for an outage: the last-known state answers, within the grace period.
   */
  async validate(): Promise<LicenseState> {
    const body = {
      key: this.options.licenseKey,
      ...(this.options.fingerprint === undefined ? {} : { fingerprint: this.options.fingerprint }),
      ...(this.options.components === undefined ? {} : { components: this.options.components }),
    };
    await this.loadActivation();
    return this.answered(async () => {
      const result = await this.asMachine<{ valid: boolean; code: string; detail: string }>(
        'POST',
        '/v1/licenses/validate',
        body,
      );
      return { status: statusOfCode(result.code), detail: result.detail };
    });
  }

  /**
   * Sends a usage report and learns the license's current status: the call that makes a
   * revocation take effect in the application. Never throws for an outage (see validate).
   */
  async sync(report: SyncReport = {}): Promise<LicenseState> {
    const body = {
      license_serial: this.options.licenseKey,
      ...(this.options.fingerprint === undefined ? {} : { hardware_fingerprint: this.options.fingerprint }),
      ...(this.options.appVersion === undefined ? {} : { app_version: this.options.appVersion }),
      ...report,
      // One id for every attempt, so a report that got through before a timeout counts once.
      report_id: timeOrderedUuid(),
    };
    await this.loadActivation();
    return this.answered(async () => {
      const result = await this.asMachine<{ status: string; message: string | null }>(
        'POST',
        '/v1/licenses/sync',
        body,
      );
      return { status: statusOfCode(result.status), detail: result.message };
    });
  }

  /**
   * The revocation status of serials (default: this license's). It needs an API key: a license
   * token is refused (`403 forbidden`), and validate() or sync() tell its license's status.
   */
  async checkRevocation(serials: string[] = [this.options.licenseKey]): Promise<RevocationResult[]> {
    const result = await this.request<{ results: RevocationResult[] }>(
      'POST',
      '/v1/licenses/check-revocation',
      {
        serials,
      },
    );
    return result.results;
  }

  /**
   * Takes (or finds again) this machine's seat. With a license token the service also answers a
   * machine token, which the client keeps (and stores) for this seat's later calls; each activate
   * gets a new one, and the previous one stops working.
   */
  async activate(): Promise<Activation> {
    const fingerprint = this.requireFingerprint();
    const { machine_token: machineToken, ...activation } = await this.request<
      Activation & { machine_token?: string }
    >('POST', '/v1/activations', {
      license_key: this.options.licenseKey,
      fingerprint,
      ...(this.options.hostname === undefined ? {} : { hostname: this.options.hostname }),
      ...(this.options.platform === undefined ? {} : { platform: this.options.platform }),
      ...(this.options.components === undefined ? {} : { components: this.options.components }),
    });
    // This answer replaces whatever a store held: loading it later must not bring the old one back.
    this.activationLoaded = true;
    this.activation = activation;
    this.#machineToken = typeof machineToken === 'string' ? machineToken : undefined;
    await this.saveActivation();
    return activation;
  }

  /**
   * Keeps the seat: one heartbeat now. After a restart it loads the stored activation, so call it
   * once before startHeartbeat().
   */
  async heartbeat(): Promise<Activation> {
    await this.loadActivation();
    const id = this.requireActivation().id;
    this.activation = await this.asMachine<Activation>(
      'POST',
      `/v1/activations/${encodeURIComponent(id)}/heartbeat`,
    );
    return this.activation;
  }

  /**
   * Heartbeats on a timer until stopHeartbeat or deactivate: at half the activation's remaining
   * lifetime when it has one, else every `heartbeatIntervalMs`. A failed beat is kept in
   * `heartbeatError` and retried at the next tick; the timer never keeps a Node process alive.
   */
  startHeartbeat(): void {
    this.requireActivation();
    this.heartbeats.start();
  }

  stopHeartbeat(): void {
    this.heartbeats.stop();
  }

  /** The last failed timer heartbeat, cleared by the next successful one. */
  get heartbeatError(): LicenseClientError | undefined {
    return this.heartbeats.error;
  }

  /** Frees the seat and stops the heartbeat. */
  async deactivate(): Promise<void> {
    this.stopHeartbeat();
    await this.loadActivation();
    const id = this.requireActivation().id;
    await this.asMachine('DELETE', `/v1/activations/${encodeURIComponent(id)}`);
    this.activation = undefined;
    this.#machineToken = undefined;
    await this.saveActivation();
  }

  /** The last-known state without asking the service, with the grace period applied as of now. */
  async lastKnownState(): Promise<LicenseState> {
    await this.loadState();
    return this.offlineState(this.state?.detail ?? null);
  }

  private async answered(ask: () => Promise<{ status: LicenseStatusCode; detail: string | null }>) {
    await this.loadState();
    let answer: { status: LicenseStatusCode; detail: string | null };
    try {
      answer = await ask();
    } catch (error) {
      const failure = asClientError(error);
      if (!failure.offline) throw failure;
      return this.offlineState(failure.message);
    }
    const checkedAt = this.now();
    const state: LicenseState = {
      valid: statusRuns(answer.status),
      status: answer.status,
      offline: false,
      checked_at: new Date(checkedAt).toISOString(),
      grace_until: statusRuns(answer.status)
        ? new Date(checkedAt + this.options.offlineGracePeriodMs).toISOString()
        : null,
      detail: answer.detail,
    };
    this.state = state;
    await this.options.store?.save(state);
    return state;
  }

  private offlineState(detail: string | null): LicenseState {
    const last = this.state;
    if (!last || last.checked_at === null) {
      return { valid: false, status: 'unknown', offline: true, checked_at: null, grace_until: null, detail };
    }
    const graceUntil = statusRuns(last.status)
      ? Date.parse(last.checked_at) + this.options.offlineGracePeriodMs
      : NaN;
    return {
      valid: statusRuns(last.status) && this.now() < graceUntil,
      status: last.status,
      offline: true,
      checked_at: last.checked_at,
      grace_until: Number.isNaN(graceUntil) ? null : new Date(graceUntil).toISOString(),
      detail,
    };
  }

  private async loadState(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const stored = await this.options.store?.load();
    if (stored && typeof stored.checked_at === 'string' && typeof stored.status === 'string')
      this.state = stored;
  }

  /** The stored activation, once, if it is this license's on this machine (the options may have changed). */
  private async loadActivation(): Promise<void> {
    if (this.activationLoaded) return;
    this.activationLoaded = true;
    const stored = await this.options.store?.loadActivation?.();
    if (this.activation || !stored?.activation || typeof stored.activation.id !== 'string') return;
    if (stored.license_key !== this.options.licenseKey) return;
    if (stored.activation.fingerprint !== this.options.fingerprint) return;
    this.activation = stored.activation;
    this.#machineToken = typeof stored.machine_token === 'string' ? stored.machine_token : undefined;
  }

  private async saveActivation(): Promise<void> {
    const activation = this.activation;
    await this.options.store?.saveActivation?.(
      activation
        ? { license_key: this.options.licenseKey, activation, machine_token: this.#machineToken ?? null }
        : null,
    );
  }

  /**
   * A call for this machine's seat: with its machine token when the client holds one, else with the
   * license token or API key. A 401 to the machine token means the activation ended (deleted, lapsed
   * and swept) or another activate replaced the token: the client drops it and asks again with its
   * own credential, whose answer (a 404 for a seat that is gone, say) is the one that counts.
   */
  private async asMachine<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = this.#machineToken;
    if (token === undefined) return this.request<T>(method, path, body);
    try {
      return await this.request<T>(method, path, body, token);
    } catch (error) {
      if (!(error instanceof LicenseClientError) || error.status !== 401) throw error;
      if (this.#machineToken === token) {
        this.#machineToken = undefined;
        await this.saveActivation();
      }
      return this.request<T>(method, path, body);
    }
  }

  private requireFingerprint(): string {
    if (this.options.fingerprint === undefined) throw new TypeError('this call needs options.fingerprint');
    return this.options.fingerprint;
  }

  private requireActivation(): Activation {
    if (!this.activation) {
      throw new LicenseClientError('not_activated', 'this machine holds no seat: activate() first', 0);
    }
    return this.activation;
  }

  /** One call with timeouts and retries; resolves to the JSON body of a 2xx. */
  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    credential: string = this.#credential,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let failure: LicenseClientError;
      let retryAfterMs: number | undefined;
      try {
        const reply = await send(this.endpoint, method, path, body, {
          authorization: `Bearer ${credential}`,
        });
        if (reply.response.ok) return parseJson(reply.text) as T;
        failure = problemOf(reply);
        // Seconds (the form the platform sends); absent or unreadable: the backoff decides.
        const header = reply.response.headers.get('retry-after');
        const retryAfter = header === null || header.trim() === '' ? Number.NaN : Number(header);
        if (Number.isFinite(retryAfter) && retryAfter >= 0)
          retryAfterMs = Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS);
      } catch (error) {
        failure = asClientError(error);
      }
      if (!failure.offline || attempt >= this.options.retries) throw failure;
      const backoff = this.options.retryDelayMs * 2 ** attempt;
      await sleep(retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2));
    }
  }
}

function statusOfCode(code: string): LicenseStatusCode {
  const lowered = code.toLowerCase();
  if (lowered === 'valid' || lowered === 'ok') return 'ok';
  const known: LicenseStatusCode[] = [
    'overage',
    'revoked',
    'suspended',
    'expired',
    'not_found',
    'fingerprint_mismatch',
    'no_activation',
    'heartbeat_dead',
    'components_mismatch',
    'overdue',
    'entitlements_missing',
  ];
  return known.includes(lowered as LicenseStatusCode) ? (lowered as LicenseStatusCode) : 'unknown';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A version-7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits. Report ids that grow
 * with time keep the service's index of them compact; the randomness keeps them unguessable.
 */
export function timeOrderedUuid(now = Date.now()): string {
  const crypto = (globalThis as { crypto?: { getRandomValues?: <T extends Uint8Array>(array: T) => T } })
    .crypto;
  if (!crypto?.getRandomValues) throw new Error('crypto.getRandomValues is not available in this runtime');
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  for (let i = 0; i < 6; i += 1) bytes[i] = Math.floor(now / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
