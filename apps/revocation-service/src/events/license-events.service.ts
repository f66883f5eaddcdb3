import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AckPolicy, ConsumerMessages, DeliverPolicy, JsMsg, nanos } from 'nats';
import {
  LICENSE_EVENTS_FILTER,
  LICENSE_STATUSES,
  LicenseView,
  LicensingEvent,
  SerialStatus,
  Streams,
} from '@licensing/contracts';
import { BusClient, deadLetter, ensureStream, namespaced } from '@licensing/shared/messaging';
import { SerialStatusCache } from '../cache/serial-status.cache';

/** Shared by every replica: each event is applied by one of them. */
const DURABLE = 'revocation-service';
const MAX_IN_FLIGHT = 256;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * Keeps the serial-status cache current from license events (created, updated, suspended,
 * reinstated, expired, revoked). An event is acknowledged only once Redis holds it; with Redis
 * down it is redelivered later, so an entry cached before the outage cannot stay stale after it.
 * Out-of-order delivery is harmless: the cache refuses to replace a newer version.
 */
@Injectable()
export class LicenseEventsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LicenseEventsService.name);
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;

  constructor(
    private readonly bus: BusClient,
    private readonly cache: SerialStatusCache,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const connection = this.bus.connection();
    const { name: stream, manager } = await ensureStream(connection, this.bus.namespace, Streams.events);
    await ensureStream(connection, this.bus.namespace, Streams.deadLetters);
    const filter = namespaced(this.bus.namespace, LICENSE_EVENTS_FILTER);
    try {
      await manager.consumers.add(stream, {
        durable_name: DURABLE,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: filter,
        ack_wait: nanos(30_000),
      });
    } catch (error) {
      // Another replica created it first; any durable of that name serves, as long as it exists.
      const existing = await manager.consumers.info(stream, DURABLE).catch(() => undefined);
      if (!existing) throw error;
      if (existing.config.filter_subject !== filter) {
        this.logger.warn({
          msg: 'events consumer has another filter',
          stream,
          filter: existing.config.filter_subject,
        });
      }
    }
    const consumer = await connection.jetstream().consumers.get(stream, DURABLE);
    this.messages = await consumer.consume({ max_messages: MAX_IN_FLIGHT });
    this.loop = this.run(this.messages);
  }

  /** Stops pulling, then lets the event in hand reach Redis; the unacknowledged rest is redelivered. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.messages?.close();
    await this.loop;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) await this.apply(message);
    } catch (error) {
      this.logger.error({ msg: 'license events consumer stopped', err: String(error) });
    }
  }

  private async apply(message: JsMsg): Promise<void> {
    const status = toSerialStatus(message);
    if (!status) {
      // Set aside, not dropped: an operator must see a license change the cache could not apply.
      await deadLetter(this.bus, message, DURABLE, 'malformed license event').then(
        () =>
          this.logger.warn({
            msg: 'malformed license event set aside',
            subject: message.subject,
            seq: message.seq,
          }),
        () => message.nak(RETRY_MAX_MS),
      );
      return;
    }
    try {
      await this.cache.putMany([status]);
      message.ack();
    } catch {
      // Logged by the cache. Back off further on each redelivery while Redis stays down.
      message.nak(Math.min(RETRY_BASE_MS * message.info.redeliveryCount, RETRY_MAX_MS));
    }
  }
}

function toSerialStatus(message: JsMsg): SerialStatus | undefined {
  let event: LicensingEvent<LicenseView>;
  try {
    event = message.json<LicensingEvent<LicenseView>>();
  } catch {
    return undefined;
  }
  const license = event?.data;
  const version = Date.parse(event?.occurred_at);
  if (
    typeof license !== 'object' ||
    license === null ||
    typeof event.org_id !== 'string' ||
    typeof license.serial !== 'string' ||
    !LICENSE_STATUSES.includes(license.status) ||
    Number.isNaN(version)
  ) {
    return undefined;
  }
  return {
    serial: license.serial,
    org_id: event.org_id,
    license_id: license.id,
    product_id: license.product_id,
    status: license.status,
    revoked_at: license.revoked_at ?? null,
    valid_until: license.valid_until ?? null,
    max_seats: license.max_seats,
    version,
  };
}
