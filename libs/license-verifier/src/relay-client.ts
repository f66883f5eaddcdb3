// The application's side of an on-premise relay: a floating seat leased over the site's network,
// with the methods of the online client (activate, heartbeat, deactivate, validate). It holds no
// credential. It trusts the relay only as far as the product's public key vouches for it: the
// relay file from `GET /v1/status` must verify with that key, and every answer must carry a
// `Licensing-Signature` of the relay key that file names, over this request's fresh nonce.
import { fromBase64, utf8 } from './encoding';
import { Heartbeat } from './heartbeat';
import { jsonObject } from './jws';
import { timeOrderedUuid, type LicenseState, type LicenseStatusCode } from './license-client';
import type { PublicKeyInput } from './public-key';
import {
  LicenseClientError,
  asClientError,
  fetchOf,
  parseObject,
  problemOf,
  send,
  type Endpoint,
  type Reply,
} from './request';
import { verifySignedAnswer } from './signed-answer';
import { verifyLicense, type VerifiedLicense } from './verify-license';

/** A seat the relay leased to this machine. */
export interface RelayLease {
  id: string;
  fingerprint: string;
  name: string | null;
  leased_at: string;
  last_heartbeat_at: string;
  expires_at: string;
}

/** `GET /v1/status`, with its relay file verified. */
export interface RelayStatus {
  site: string;
  serial: string;
  product_id: string;
  license_id: string;
  seats: number;
  seats_in_use: number;
  lease_seconds: number;
  file_expires_at: string;
  expired: boolean;
  revoked: boolean;
  clock_rewound: boolean;
  /** The relay file's license, verified with the product public key. */
  license: VerifiedLicense;
}

export interface RelayClientOptions {
  /** The relay on the site's network, e.g. `http://relay.plant4.local:8700`. */
  relayUrl: string;
  /** The product's public key (PEM, JWK or JWK Set) that the application ships with. */
  publicKey: PublicKeyInput;
  /** The product the relay file must be for (optional: the key already pins the product). */
  productId?: string;
  /** This machine's fingerprint: one machine holds one lease. */
  fingerprint: string;
  /** A name the relay's lease list shows (at most 200 characters). */
  name?: string;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** Longest wait between two timer heartbeats (default 5 minutes). */
  heartbeatIntervalMs?: number;
  fetch?: typeof fetch;
  /** The clock (for tests). */
  now?: () => number;
}

/**
 * Leases a floating seat from a relay. The errors are `LicenseClientError`s: the relay's own
 * problem codes (`no_seats`, `license_revoked`, `relay_file_expired`, `clock_rewound`,
 * `not_found`), `relay_file_invalid` and `product_mismatch` (the relay file does not verify with
 * the product key, or is another product's), `unverified_answer` (an answer without a valid
 * signature of the relay key for this request), `not_activated`, `network` and `timeout`.
 */
export class RelayClient {
  private readonly endpoint: Endpoint;
  private readonly now: () => number;
  private readonly heartbeats: Heartbeat;
  /** The relay's public key, from the verified relay file. */
  private relayKey: string | undefined;
  private lease: RelayLease | undefined;

  constructor(private readonly options: RelayClientOptions) {
    if (!options.relayUrl || !options.publicKey || !options.fingerprint) {
      throw new TypeError('RelayClient needs relayUrl, publicKey and fingerprint');
    }
    this.endpoint = {
      baseUrl: options.relayUrl.replace(/\/+$/, ''),
      fetch: fetchOf(options.fetch),
      timeoutMs: options.timeoutMs ?? 10_000,
      peer: 'the relay',
    };
    this.now = options.now ?? Date.now;
    this.heartbeats = new Heartbeat({
      beat: () => this.heartbeat(),
      expiresAt: () => this.lease?.expires_at,
      intervalMs: options.heartbeatIntervalMs ?? 5 * 60_000,
      // Relay leases can be short (a few seconds).
      floorMs: 500,
      now: this.now,
      // A lease the relay no longer knows ends the loop.
      goOn: () => this.lease !== undefined,
    });
  }

  /**
   * The relay's status, its relay file verified with the product key. Throws `relay_file_invalid`,
   * `product_mismatch` or `relay_file_expired` for a file that does not hold.
   */
  async status(): Promise<RelayStatus> {
    const nonce = newNonce();
    const answer = await this.send('GET', '/v1/status', undefined, nonce);
    const body = parseObject(answer.text);
    const file = body?.['relay_file'];
    if (!body || typeof file !== 'string') throw invalidFile('the status carries no relay file');
    const verdict = await verifyLicense(file, this.options.publicKey, {
      now: this.now(),
      ...(this.options.productId === undefined ? {} : { productId: this.options.productId }),
    });
    const codes = verdict.errors.map((error) => error.code);
    if (codes.includes('product_mismatch')) {
      throw new LicenseClientError('product_mismatch', 'the relay file is for another product', 0);
    }
    if (codes.length > 0 && codes.every((code) => code === 'expired' || code === 'file_expired')) {
      throw new LicenseClientError('relay_file_expired', 'the relay file has expired', 0);
    }
    const relayKey = relayKeyOf(file);
    if (!verdict.valid || !verdict.license || relayKey === undefined) {
      throw invalidFile(
        `the relay file does not verify with the product key (${codes.join(', ') || 'no relay claim'})`,
      );
    }
    // The status itself must come from the relay that file names.
    await this.checkSignature(answer, nonce, relayKey);
    this.relayKey = relayKey;
    const number = (name: string) => (typeof body[name] === 'number' ? (body[name] as number) : 0);
    return {
      site: String(body['site'] ?? ''),
      serial: verdict.license.serial,
      product_id: verdict.license.product_id,
      license_id: verdict.license.license_id,
      seats: number('seats'),
      seats_in_use: number('seats_in_use'),
      lease_seconds: number('lease_seconds'),
      file_expires_at: String(body['file_expires_at'] ?? ''),
      expired: body['expired'] === true,
      revoked: body['revoked'] === true,
      clock_rewound: body['clock_rewound'] === true,
      license: verdict.license,
    };
  }

  /** Leases a seat for this machine; a machine holding one gets it back, renewed. */
  async activate(): Promise<RelayLease> {
    const body = {
      fingerprint: this.options.fingerprint,
      ...(this.options.name ? { name: this.options.name } : {}),
    };
    this.lease = await this.call<RelayLease>('POST', '/v1/leases', body);
    return this.lease;
  }

  /** Renews the lease now. */
  async heartbeat(): Promise<RelayLease> {
    const id = this.requireLease().id;
    try {
      this.lease = await this.call<RelayLease>('POST', `/v1/leases/${encodeURIComponent(id)}/heartbeat`);
    } catch (error) {
      // The relay no longer knows the lease (it lapsed, or a revocation ended it).
      if (error instanceof LicenseClientError && error.code === 'not_found') this.lease = undefined;
      throw error;
    }
    return this.lease;
  }

  /**
   * Heartbeats on a timer until stopHeartbeat or deactivate: at half the lease's remaining lifetime,
   * at most every `heartbeatIntervalMs`. A failed beat is kept in `heartbeatError`; the timer never
   * keeps a Node process alive.
   */
  startHeartbeat(): void {
    this.requireLease();
    this.heartbeats.start();
  }

  stopHeartbeat(): void {
    this.heartbeats.stop();
  }

  /** The last failed timer heartbeat, cleared by the next successful one. */
  get heartbeatError(): LicenseClientError | undefined {
    return this.heartbeats.error;
  }

  /** The lease this client holds, if any. */
  get currentLease(): RelayLease | undefined {
    return this.lease;
  }

  /** Releases the seat and stops the heartbeat. */
  async deactivate(): Promise<void> {
    this.stopHeartbeat();
    const id = this.requireLease().id;
    await this.call('DELETE', `/v1/leases/${encodeURIComponent(id)}`);
    this.lease = undefined;
  }

  /**
   * Whether the application may run: `ok` while this machine's lease lives and the relay's license
   * holds. Otherwise `revoked`, `expired` (the relay file), `no_seats` (no lease, and every seat is
   * taken), `no_activation` (no lease) or `heartbeat_dead` (the lease lapsed). When the relay is
   * unreachable, the lease carries the application until it expires (`offline: true`). Throws for a
   * relay that does not prove itself (`relay_file_invalid`, `product_mismatch`, `unverified_answer`).
   */
  async validate(): Promise<LicenseState> {
    let status: RelayStatus;
    try {
      status = await this.status();
    } catch (error) {
      const failure = asClientError(error);
      if (failure.code === 'relay_file_expired') return this.state('expired', false, failure.message);
      if (!failure.offline) throw failure;
      return this.state(this.leaseLives() ? 'ok' : 'unknown', true, failure.message);
    }
    if (status.revoked) return this.state('revoked', false, 'the license is revoked');
    if (status.expired) return this.state('expired', false, 'the relay file has expired');
    if (!this.lease) {
      return status.seats_in_use >= status.seats
        ? this.state('no_seats', false, 'every seat is leased')
        : this.state('no_activation', false, 'this machine holds no lease: activate() first');
    }
    if (!this.leaseLives()) return this.state('heartbeat_dead', false, 'the lease has lapsed');
    return this.state('ok', false, null);
  }

  private state(status: LicenseStatusCode, offline: boolean, detail: string | null): LicenseState {
    const runs = status === 'ok';
    return {
      valid: runs,
      status,
      offline,
      checked_at: offline ? null : new Date(this.now()).toISOString(),
      grace_until: runs && this.lease ? this.lease.expires_at : null,
      detail,
    };
  }

  private leaseLives(): boolean {
    return this.lease !== undefined && Date.parse(this.lease.expires_at) > this.now();
  }

  private requireLease(): RelayLease {
    if (!this.lease)
      throw new LicenseClientError('not_activated', 'this machine holds no lease: activate() first', 0);
    return this.lease;
  }

  /** A lease call: the relay proven first (once), the answer's signature checked, its JSON returned. */
  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (this.relayKey === undefined) await this.status();
    const nonce = newNonce();
    const answer = await this.send(method, path, body, nonce);
    await this.checkSignature(answer, nonce, this.relayKey!);
    return parseObject(answer.text) as T;
  }

  private async checkSignature(answer: Reply, nonce: string, relayKey: string): Promise<void> {
    const signature = answer.response.headers.get('licensing-signature');
    const check = await verifySignedAnswer({ body: answer.text, signature, nonce }, relayKey, {
      now: this.now(),
    });
    if (!check.valid) {
      const codes = check.errors.map((error) => error.code).join(', ');
      throw new LicenseClientError(
        'unverified_answer',
        `the answer is not signed by the relay for this request (${codes}): it counts as no answer`,
        answer.response.status,
      );
    }
  }

  /** One request; resolves for a 2xx, throws the relay's problem otherwise. */
  private async send(method: string, path: string, body: unknown, nonce: string): Promise<Reply> {
    const reply = await send(this.endpoint, method, path, body, { 'licensing-nonce': nonce });
    // Problems are not signed: they can only refuse, never grant.
    if (!reply.response.ok) throw problemOf(reply);
    return reply;
  }
}

/** The `relay.public_key` claim of a relay file (base64 of a compact JWS), read after it verified. */
function relayKeyOf(file: string): string | undefined {
  const bytes = fromBase64(file.trim());
  const jws = bytes === undefined ? undefined : utf8(bytes);
  const payload = jws?.split('.')[1];
  const relay = payload === undefined ? undefined : jsonObject(payload)?.['relay'];
  const key =
    relay && typeof relay === 'object' ? (relay as Record<string, unknown>)['public_key'] : undefined;
  return typeof key === 'string' && key.length > 0 ? key : undefined;
}

const invalidFile = (message: string) => new LicenseClientError('relay_file_invalid', message, 0);

/** A fresh nonce per request (the relay accepts 8 to 128 characters of base64url and more). */
const newNonce = (): string => timeOrderedUuid().replace(/-/g, '') + timeOrderedUuid().slice(24);
