import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { DomainError } from '@licensing/shared/errors';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { IdempotencyKeyEntity, ReplayedHeaders } from './idempotency-key.entity';

/** A claim older than this many bus timeouts belongs to a gateway that died mid-request. */
const LEASE_BUS_TIMEOUTS = 4;
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 250;
/** How often a release the database refused is tried again. */
const RELEASE_RETRY_MS = 250;

export interface IdempotentRequest {
  orgId: string;
  key: string;
  /** Method and route template: `POST /v1/licenses`. */
  route: string;
  requestHash: string;
}

/** This request holds the key: it runs, then stores its answer (`complete`) or gives the key back (`release`). */
export interface OwnedClaim {
  kind: 'owned';
  id: string;
  token: string;
}

/** The key already has an answer: the first request's, to be sent again. */
export interface StoredAnswer {
  kind: 'replay';
  status: number;
  body: unknown;
  headers: ReplayedHeaders;
}

interface ClaimRow {
  id: string;
  claim_token: string;
  taken_over: boolean;
}

/**
 * Idempotency keys, kept in PostgreSQL rather than Redis: a stored answer stands in for a created
 * resource, so it must survive restarts and Redis evictions, and be seen by every gateway replica
 * at once; the unique (org_id, key) row is also what lets exactly one of concurrent repeats run.
 * Requests without the header never reach this service.
 */
@Injectable()
export class IdempotencyService implements OnApplicationShutdown {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly waitMs: number;
  /** Releases waiting to be tried again, dropped at shutdown. */
  private readonly retries = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ttlMs = config.IDEMPOTENCY_KEY_TTL_HOURS * 3_600_000;
    this.leaseMs = LEASE_BUS_TIMEOUTS * config.BUS_TIMEOUT_MS;
    // A first request answers within about one bus timeout, or it has failed (and released the key).
    this.waitMs = config.BUS_TIMEOUT_MS;
  }

  /**
   * Takes the key for this request, or answers the stored response of its first use. A repeat
   * while the first use is running waits for it, up to a bus timeout, then is a 409. The key used
   * on another route or with another body is a 409 at once.
   */
  async claim(request: IdempotentRequest): Promise<OwnedClaim | StoredAnswer> {
    const deadline = Date.now() + this.waitMs;
    for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(pollMs * 2, MAX_POLL_MS)) {
      const owned = await this.tryClaim(request);
      if (owned) return owned;
      const row = await this.unavailableOnFailure(() =>
        this.dataSource.getRepository(IdempotencyKeyEntity).findOne({
          select: { route: true, requestHash: true, status: true, responseBody: true, responseHeaders: true },
          where: { orgId: request.orgId, key: request.key },
        }),
      );
      if (!row) continue; // its first request failed and gave the key back meanwhile: run this one
      if (row.route !== request.route) {
        throw DomainError.conflict(`This Idempotency-Key was already used on another route (${row.route})`);
      }
      if (row.requestHash !== request.requestHash) {
        throw DomainError.conflict('This Idempotency-Key was already used with a different request body');
      }
      if (row.status !== null) {
        return {
          kind: 'replay',
          status: row.status,
          body: row.responseBody,
          headers: row.responseHeaders ?? {},
        };
      }
      if (Date.now() + pollMs > deadline) {
        // Unlike the other conflicts, this one passes: `Retry-After` tells a client to try again.
        const error = DomainError.conflict(
          'A request with this Idempotency-Key is still in progress; retry later with the same key',
        );
        error.retryAfterSeconds = 1;
        throw error;
      }
      await sleep(pollMs);
    }
  }

  /** Stores the answer of a request that ran (2xx or 4xx), unless its claim was taken over meanwhile. */
  async complete(claim: OwnedClaim, status: number, body: unknown, headers: ReplayedHeaders): Promise<void> {
    try {
      const { affected } = await this.dataSource
        .getRepository(IdempotencyKeyEntity)
        .update(
          { id: claim.id, claimToken: claim.token, status: IsNull() },
          { status, responseBody: body as object, responseHeaders: headers },
        );
      if (!affected)
        this.logger.warn({ msg: 'idempotency claim was taken over before the answer was stored' });
    } catch (error) {
      // The answer still goes out; a repeat finds the claim in progress, and after the lease runs again.
      this.logger.warn({ msg: 'could not store the answer of an idempotent request', err: String(error) });
    }
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * Gives the key back after a 5xx: the request may not have happened, so a retry must run again.
   * The 5xx is often the database itself going away (an outage, a failover): the release then
   * fails too, and is tried again in the background until it lands or the claim's lease ends.
   * Otherwise the client's retry would find the key in progress (`409`) until the lease ran out.
   */
  async release(claim: OwnedClaim): Promise<void> {
    const deadline = Date.now() + this.leaseMs;
    // Deletes only this request's claim: after a takeover or a stored answer it does nothing.
    const release = () =>
      this.dataSource
        .getRepository(IdempotencyKeyEntity)
        .delete({ id: claim.id, claimToken: claim.token, status: IsNull() });
    const retry = () => {
      if (this.stopped || Date.now() >= deadline) return;
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        release().catch(retry);
      }, RELEASE_RETRY_MS);
      timer.unref();
      this.retries.add(timer);
    };
    try {
      await release();
    } catch (error) {
      this.logger.warn({ msg: 'could not release an idempotency key; retrying', err: String(error) });
      retry();
    }
  }

  /**
   * Inserts the claim, or takes over the existing row when it has expired, or when it is a claim of
   * the same request whose lease ran out (its gateway died mid-request). `claim_token` tells
   * whether this statement won.
   */
  private async tryClaim(request: IdempotentRequest): Promise<OwnedClaim | undefined> {
    const token = randomUUID();
    const rows = await this.unavailableOnFailure(
      () =>
        this.dataSource.query(
          `INSERT INTO identity.idempotency_keys
                  (id, org_id, key, route, request_hash, claim_token, locked_at, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, now(), now(), now() + $7 * interval '1 millisecond')
           ON CONFLICT ON CONSTRAINT uq_idempotency_keys_org_key DO UPDATE
              SET route = EXCLUDED.route, request_hash = EXCLUDED.request_hash,
                  claim_token = EXCLUDED.claim_token, locked_at = EXCLUDED.locked_at,
                  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
                  status = NULL, response_body = NULL, response_headers = NULL
            WHERE idempotency_keys.expires_at <= now()
               OR (idempotency_keys.status IS NULL
                   AND idempotency_keys.locked_at <= now() - $8 * interval '1 millisecond'
                   AND idempotency_keys.route = EXCLUDED.route
                   AND idempotency_keys.request_hash = EXCLUDED.request_hash)
           RETURNING id, claim_token, xmax <> 0 AS taken_over`,
          [
            randomUUID(),
            request.orgId,
            request.key,
            request.route,
            request.requestHash,
            token,
            this.ttlMs,
            this.leaseMs,
          ],
        ) as Promise<ClaimRow[]>,
    );
    const row = rows[0];
    if (row?.claim_token !== token) return undefined;
    if (row.taken_over) {
      this.logger.log({
        msg: 'idempotency key taken over (expired, or abandoned claim)',
        route: request.route,
      });
    }
    return { kind: 'owned', id: row.id, token };
  }

  private async unavailableOnFailure<T>(query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      this.logger.warn({ msg: 'idempotency store unreachable', err: String(error) });
      throw new DomainError(
        'unavailable',
        'Idempotency keys cannot be checked right now; retry with the same key',
      );
    }
  }
}
