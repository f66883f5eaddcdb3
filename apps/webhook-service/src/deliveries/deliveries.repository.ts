import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { preparedStatement } from '@licensing/shared/database';
import { tableOf } from '../endpoints/endpoint.entity';
import { EndpointEntity } from '../endpoints/endpoint.entity';
import { DeliveryEntity } from './delivery.entity';
import { WebhookEventEntity } from './webhook-event.entity';

/** An event as it is delivered: exactly these members, in this order. */
export interface WebhookEvent {
  id: string;
  type: string;
  org_id: string;
  occurred_at: string;
  data: unknown;
}

/** An event as stored for its deliveries: its id, type, organization and the exact body. */
interface StoredEvent {
  id: string;
  type: string;
  org_id: string;
  occurred_at: string;
  payload: string;
}

/** The stored form of an event: the body serialized once, here, for every delivery of it. */
export function storedEvent(event: WebhookEvent): StoredEvent {
  const { id, type, org_id, occurred_at } = event;
  return { id, type, org_id, occurred_at, payload: JSON.stringify(event) };
}

/** A delivery a worker has claimed, with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  org_id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  round_attempts: number;
  payload: string;
  url: string;
  secret_ciphertext: Buffer;
  secret_key_version: string;
  previous_secret_ciphertext: Buffer | null;
  previous_secret_key_version: string | null;
  previous_secret_valid: boolean;
}

interface AttemptRecord {
  id: string;
  endpointId: string;
  /** The attempt count the claim set: a record for an older claim (its lease taken over) is dropped. */
  attempts: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Delay before the next attempt; undefined when the attempts are spent (the delivery fails). */
  retryInMs?: number;
}

/** The delivery queue in PostgreSQL: fan-out, claims with FOR UPDATE SKIP LOCKED, and outcomes. */
@Injectable()
export class DeliveriesRepository {
  private readonly deliveries: string;
  private readonly events: string;
  private readonly endpoints: string;

  /** The enabled endpoints of some organizations ($1, uuid[]): read for every batch of events. */
  private readonly enabledEndpoints: (
    values: unknown[],
  ) => Promise<Array<{ id: string; org_id: string; events: string[]; created_at: Date }>>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.deliveries = tableOf(dataSource, DeliveryEntity);
    this.events = tableOf(dataSource, WebhookEventEntity);
    this.endpoints = tableOf(dataSource, EndpointEntity);
    this.enabledEndpoints = preparedStatement(
      dataSource,
      'webhook-enabled-endpoints',
      `SELECT id, org_id, events, created_at FROM ${this.endpoints} WHERE enabled AND org_id = ANY($1::uuid[])`,
    );
  }

  /**
   * Writes one delivery per (event, enabled endpoint of its organization that subscribes to its
   * type), and the events that have any, in one transaction. An endpoint receives only events that
   * occurred once it existed: a fan-out that lags does not send a new endpoint older events. Idempotent: an event already fanned
   * out (a redelivered stream message) adds nothing. Answers how many deliveries are new. The
   * endpoints are read before the transaction (a read inside it would see no more, at READ
   * COMMITTED), so a batch nobody receives, the usual one, costs that one statement.
   */
  async fanOut(
    events: WebhookEvent[],
    matches: (filters: string[], type: string) => boolean,
  ): Promise<number> {
    if (events.length === 0) return 0;
    const orgs = [...new Set(events.map((event) => event.org_id))];
    const endpoints = await this.enabledEndpoints([orgs]);
    const rows: Array<{
      id: string;
      endpoint_id: string;
      event_id: string;
      org_id: string;
      event_type: string;
    }> = [];
    const kept: WebhookEvent[] = [];
    for (const event of events) {
      const occurredAt = Date.parse(event.occurred_at);
      const receivers = endpoints.filter(
        (endpoint) =>
          endpoint.org_id === event.org_id &&
          endpoint.created_at.getTime() <= occurredAt &&
          matches(endpoint.events, event.type),
      );
      if (receivers.length === 0) continue;
      kept.push(event);
      for (const endpoint of receivers) {
        rows.push({
          id: randomUUID(),
          endpoint_id: endpoint.id,
          event_id: event.id,
          org_id: event.org_id,
          event_type: event.type,
        });
      }
    }
    if (rows.length === 0) return 0;
    return this.dataSource.transaction(async (manager) => {
      await this.insertEvents(manager, kept.map(storedEvent));
      return this.insertDeliveries(manager, rows);
    });
  }

  async insertEvents(manager: EntityManager, events: StoredEvent[]): Promise<void> {
    await manager.query(
      `INSERT INTO ${this.events} (id, org_id, type, payload, occurred_at, created_at)
       SELECT id, org_id, type, payload, occurred_at, now()
         FROM jsonb_to_recordset($1::jsonb)
           AS e(id uuid, org_id uuid, type text, payload text, occurred_at timestamptz)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(events)],
    );
  }

  /** New deliveries, due at once. Answers how many were new. */
  async insertDeliveries(
    manager: EntityManager,
    rows: Array<{ id: string; endpoint_id: string; event_id: string; org_id: string; event_type: string }>,
  ): Promise<number> {
    const inserted = await manager.query<unknown[]>(
      `INSERT INTO ${this.deliveries}
         (id, endpoint_id, event_id, org_id, event_type, status, attempts, round_attempts, next_attempt_at, created_at)
       SELECT id, endpoint_id, event_id, org_id, event_type, 'pending', 0, 0, now(), now()
         FROM jsonb_to_recordset($1::jsonb)
           AS d(id uuid, endpoint_id uuid, event_id uuid, org_id uuid, event_type text)
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING 1`,
      [JSON.stringify(rows)],
    );
    return inserted.length;
  }

  /**
   * Claims due deliveries of enabled endpoints: at most `perEndpoint` of each endpoint, at most
   * `limit` in all, none of the `busy` endpoints (those whose slots are all taken in this process).
   * Locked rows (another replica's claim in progress) are skipped, and the claim moves each row's
   * `next_attempt_at` past the attempt's deadline: until then no other worker takes it, and if this
   * process dies mid-attempt it is due again once that lease ends.
   */
  async claim(options: {
    limit: number;
    perEndpoint: (endpointId: string) => number;
    maxPerEndpoint: number;
    busy: string[];
    leaseMs: number;
  }): Promise<ClaimedDelivery[]> {
    if (options.limit <= 0) return [];
    return this.dataSource.transaction(async (manager) => {
      const candidates = await manager.query<Array<{ id: string; endpoint_id: string }>>(
        `SELECT p.id, p.endpoint_id
           FROM (SELECT DISTINCT d.endpoint_id
                   FROM ${this.deliveries} d
                   JOIN ${this.endpoints} e ON e.id = d.endpoint_id AND e.enabled
                  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
                    AND d.endpoint_id <> ALL($1::uuid[])
                  LIMIT $2) due
          CROSS JOIN LATERAL (
                 SELECT d.id, d.endpoint_id
                   FROM ${this.deliveries} d
                  WHERE d.endpoint_id = due.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()
                  ORDER BY d.next_attempt_at
                  LIMIT $3
                    FOR UPDATE SKIP LOCKED) p`,
        [options.busy, options.limit, options.maxPerEndpoint],
      );
      const taken = new Map<string, number>();
      const chosen: string[] = [];
      for (const { id, endpoint_id } of candidates) {
        const count = taken.get(endpoint_id) ?? 0;
        if (chosen.length >= options.limit || count >= options.perEndpoint(endpoint_id)) continue;
        taken.set(endpoint_id, count + 1);
        chosen.push(id);
      }
      if (chosen.length === 0) return [];
      const [claimed] = await manager.query<[ClaimedDelivery[], number]>(
        `UPDATE ${this.deliveries} d
            SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000),
                attempts = d.attempts + 1,
                round_attempts = d.round_attempts + 1,
                last_attempt_at = now()
           FROM ${this.events} ev, ${this.endpoints} e
          WHERE d.id = ANY($1::uuid[]) AND ev.id = d.event_id AND e.id = d.endpoint_id
      RETURNING d.id, d.endpoint_id, d.org_id, d.event_id, d.event_type, d.attempts, d.round_attempts,
                ev.payload, e.url, e.secret_ciphertext, e.secret_key_version,
                e.previous_secret_ciphertext, e.previous_secret_key_version,
                coalesce(e.previous_secret_expires_at > now(), false) AS previous_secret_valid`,
        [chosen, options.leaseMs],
      );
      return claimed;
    });
  }

  /** Stores an attempt's outcome, and the endpoint's failure clock (cleared by a success). */
  async record(attempt: AttemptRecord): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const status = attempt.delivered ? 'delivered' : attempt.retryInMs === undefined ? 'failed' : 'pending';
      const [, updated] = await manager.query<[unknown[], number]>(
        `UPDATE ${this.deliveries}
            SET status = $3::varchar,
                next_attempt_at = CASE WHEN $3::varchar = 'pending'
                                       THEN now() + make_interval(secs => $4::double precision / 1000) END,
                delivered_at = CASE WHEN $3::varchar = 'delivered' THEN now() ELSE delivered_at END,
                last_status_code = $5, last_error = $6, last_duration_ms = $7
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [
          attempt.id,
          attempt.attempts,
          status,
          attempt.retryInMs ?? 0,
          attempt.statusCode,
          attempt.error?.slice(0, 500) ?? null,
          attempt.durationMs,
        ],
      );
      if (updated === 0) return;
      await manager.query(
        attempt.delivered
          ? `UPDATE ${this.endpoints} SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`
          : `UPDATE ${this.endpoints} SET failing_since = now() WHERE id = $1 AND failing_since IS NULL`,
        [attempt.endpointId],
      );
    });
  }
}
