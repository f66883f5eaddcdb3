import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AckPolicy, DeliverPolicy, nanos } from 'nats';
import { DataSource, EntityManager, In } from 'typeorm';
import { LICENSE_EVENTS_FILTER, LicenseEventRecord, SerialStatus } from '@licensing/contracts';
import { BusClient, decodeMessage, namespaced } from '@licensing/shared/messaging';
import { CatalogProductEntity } from '../catalog/catalog-product.entity';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';
import { LicenseSigner } from '../licenses/license-signer.service';
import { LicenseEntity } from '../licenses/license.entity';
import { advanceListVersion } from '../revocation-lists/list-versions';
import { StreamCheckpoints } from './stream-checkpoints';

const FETCH_BATCH = 1_000;
const FETCH_EXPIRES_MS = 2_000;
/** Serials of missing licenses named in the log; the count is always complete. */
const MISSING_LOGGED = 50;

/** A license as one of its events last described it. */
interface Snapshot {
  status: SerialStatus;
  /** The license as the API returned it at the time, when the event carried a well-formed one. */
  fields?: SnapshotFields;
}

/** What the replay read of one product's licenses. */
interface ProductEvents {
  orgId: string;
  /** Its license events since the checkpoint. */
  events: number;
  /** The newest snapshot of each of its licenses, by license id. */
  licenses: Map<string, Snapshot>;
}

interface SnapshotFields {
  customer_id: string | null;
  customer_email: string | null;
  features: string[];
  hardware_binding: { fingerprint: string } | null;
}

interface ReplayOutcome {
  /** The first and last sequence numbers read (nothing read: `from` > `to`). */
  from: number;
  to: number;
  /** License events read. */
  events: number;
  /** Licenses written back to what their newest event says. */
  restored: number;
  /** Serials of licenses the events know and this database does not (created after the backup). */
  missing: string[];
}

/**
 * Brings the database up to date with the license events the stream holds, when it is behind
 * them: restored from a backup, or a standby promoted after an asynchronous failover lost the last
 * commits. Without it, a license revoked after the backup (or revoked just before the crash)
 * would be active again.
 *
 * The database's checkpoint says how far the stream reached when the database last looked. Every
 * license event after it is read; a license whose newest event is newer than its row gets that
 * event's state back: status, revocation, validity, seats and fields, signed again when a signed
 * field changed. Each product with such a license moves its revocation list's version past every
 * version published since the checkpoint. It runs at boot, before the service takes any message,
 * then every EVENT_REPLAY_MS. In normal operation every row is as new as its events (a change is
 * committed before its event is published), so a run reads a few events and writes nothing.
 *
 * Not replayed: what the events do not describe in full (activations, license tokens, key pairs)
 * and licenses whose creation was lost (their serials are logged). When the stream no longer holds
 * every event since the checkpoint (a backup older than its retention), the service refuses to
 * start unless RESTORE_ACCEPT_EVENT_GAP is set.
 */
@Injectable()
export class LicenseEventReplay implements OnApplicationShutdown {
  private readonly logger = new Logger(LicenseEventReplay.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
    private readonly checkpoints: StreamCheckpoints,
    private readonly signer: LicenseSigner,
    @Inject(LICENSE_SERVICE_CONFIG) private readonly config: LicenseServiceConfig,
  ) {}

  /** At boot: replays what the database missed (or refuses a gap), then again every EVENT_REPLAY_MS. */
  async run(): Promise<ReplayOutcome | undefined> {
    const outcome = await this.replay({ atBoot: true });
    this.schedule();
    return outcome;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.replay({ atBoot: false })
        .catch((error: unknown) => {
          // NATS or PostgreSQL away: the checkpoint stays, and the next run reads from it.
          this.logger.warn({ msg: 'license event replay failed; retrying', err: String(error) });
        })
        .finally(() => this.schedule());
    }, this.config.EVENT_REPLAY_MS);
    this.timer.unref();
  }

  private async replay({ atBoot }: { atBoot: boolean }): Promise<ReplayOutcome | undefined> {
    const stream = await this.checkpoints.position();
    const checkpoint = await this.checkpoints.read();
    if (checkpoint === undefined) {
      // A new database: nothing happened to it before now.
      await this.checkpoints.write(stream.lastSeq);
      return undefined;
    }
    if (checkpoint > stream.lastSeq) {
      this.logger.warn({
        msg: 'the events stream was recreated (it ends before the checkpoint of this database): nothing to replay',
        checkpoint,
        stream_last_seq: stream.lastSeq,
      });
      await this.checkpoints.write(stream.lastSeq);
      return undefined;
    }
    let from = checkpoint + 1;
    if (from < stream.firstSeq) {
      if (atBoot && !this.config.RESTORE_ACCEPT_EVENT_GAP) {
        throw new Error(
          `Events ${checkpoint + 1} to ${stream.firstSeq - 1} after this database's checkpoint are no longer in the events stream: ` +
            'license changes made after the backup would be lost. Set RESTORE_ACCEPT_EVENT_GAP=true to start anyway.',
        );
      }
      this.logger.error({
        msg: atBoot
          ? 'license events lost after a restore, accepted by RESTORE_ACCEPT_EVENT_GAP'
          : 'license events left the stream before they could be compared with the database',
        checkpoint,
        stream_first_seq: stream.firstSeq,
      });
      from = stream.firstSeq;
    }
    if (from > stream.lastSeq) return undefined;

    const { products, events, reached } = await this.read(stream.name, from);
    let restored = 0;
    const missing: string[] = [];
    for (const [productId, product] of products) {
      const outcome = await this.apply(productId, product);
      restored += outcome.restored;
      missing.push(...outcome.missing);
    }
    await this.checkpoints.write(Math.max(stream.lastSeq, reached));
    const outcome = { from, to: reached, events, restored, missing };
    if (restored > 0 || missing.length > 0) {
      this.logger.warn({
        msg: 'license state replayed from the events stream: the database was behind it (a restore, a failover)',
        from,
        to: reached,
        events,
        restored,
        missing: missing.length,
        missing_serials: missing.slice(0, MISSING_LOGGED),
      });
    }
    return outcome;
  }

  /** The newest snapshot of every license changed from `from` on, by license id. */
  private async read(
    stream: string,
    from: number,
  ): Promise<{ products: Map<string, ProductEvents>; events: number; reached: number }> {
    const nats = this.bus.connection();
    const manager = await nats.jetstreamManager();
    const consumer = await manager.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
      filter_subject: namespaced(this.bus.namespace, LICENSE_EVENTS_FILTER),
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: nanos(60_000),
    });
    const products = new Map<string, ProductEvents>();
    let events = 0;
    let reached = from - 1;
    try {
      const reader = await nats.jetstream().consumers.get(stream, consumer.name);
      let pending = consumer.num_pending;
      let emptyFetches = 0;
      while (pending > 0) {
        const messages = await reader.fetch({
          max_messages: Math.min(pending, FETCH_BATCH),
          expires: FETCH_EXPIRES_MS,
        });
        let received = 0;
        for await (const message of messages) {
          received++;
          events++;
          reached = message.seq;
          pending = message.info.pending;
          const snapshot = snapshotOf(message.data);
          if (!snapshot) {
            this.logger.warn({ msg: 'a license event that does not decode is skipped', seq: message.seq });
          } else {
            const { product_id: productId, org_id: orgId, license_id: licenseId } = snapshot.status;
            let product = products.get(productId);
            if (!product) products.set(productId, (product = { orgId, events: 0, licenses: new Map() }));
            product.events++;
            const known = product.licenses.get(licenseId);
            if (!known || known.status.version <= snapshot.status.version)
              product.licenses.set(licenseId, snapshot);
          }
          if (pending === 0) break;
        }
        if (received > 0) continue;
        // Nothing came: ask the server what is left rather than trust the count it gave before.
        pending = (await manager.consumers.info(stream, consumer.name)).num_pending;
        if (pending > 0 && ++emptyFetches >= 3) {
          throw new Error('the events stream stopped delivering during the replay');
        }
      }
    } finally {
      await manager.consumers.delete(stream, consumer.name).catch(() => undefined);
    }
    return { products, events, reached };
  }

  /**
   * One product in one transaction: its licenses written back, and its list version moved past
   * every version published since the checkpoint. Each version bump came with at least one
   * license event of the product, so `events + 1` versions ahead is ahead of all of them.
   */
  /**
   * One product: its licenses that are behind their events written back, and its list version
   * moved past every version published since the checkpoint (each bump came with at least one
   * license event of the product, so `events + 1` versions ahead is ahead of all of them). A first
   * read without locks finds nothing to do in normal operation; only licenses found behind are
   * locked, and checked again under the lock.
   */
  private async apply(
    productId: string,
    product: ProductEvents,
  ): Promise<{ restored: number; missing: string[] }> {
    const ids = [...product.licenses.keys()];
    const seen = await this.dataSource.getRepository(LicenseEntity).find({
      select: { id: true, status: true, updatedAt: true },
      where: { id: In(ids) },
    });
    if (seen.length === ids.length && !seen.some((row) => this.isBehind(row, product))) {
      return { restored: 0, missing: [] };
    }
    return this.dataSource.transaction(async (manager) => {
      const catalogProduct = await manager.findOneBy(CatalogProductEntity, { id: productId });
      // A deleted product took its licenses along: they are gone, not lost.
      if (!catalogProduct) return { restored: 0, missing: [] };
      const rows = await manager.find(LicenseEntity, {
        where: { id: In(ids) },
        order: { id: 'ASC' },
        lock: { mode: 'pessimistic_write' },
      });
      const found = new Set(rows.map((row) => row.id));
      const missing = ids.filter((id) => !found.has(id)).map((id) => product.licenses.get(id)!.status.serial);
      const behind = rows.filter((row) => this.isBehind(row, product));
      if (behind.length === 0 && missing.length === 0) return { restored: 0, missing };
      const now = new Date();
      const statusChanged: LicenseEntity[] = [];
      for (const row of behind) {
        const snapshot = product.licenses.get(row.id)!;
        const statusBefore = row.status;
        const signedBefore = signedFields(row);
        applySnapshot(row, snapshot);
        if (signedFields(row) !== signedBefore) await this.signAgain(manager, row, catalogProduct, now);
        await manager.save(row);
        if (row.status !== statusBefore) statusChanged.push(row);
      }
      // Replicas replaying at once may both move it: a version too far ahead is harmless.
      await advanceListVersion(
        manager,
        { id: productId, orgId: product.orgId },
        product.events + 1,
        statusChanged,
        now,
      );
      return { restored: behind.length, missing };
    });
  }

  /** Older than its newest event. Revocation is final: no event makes a revoked license anything else. */
  private isBehind(row: Pick<LicenseEntity, 'id' | 'status' | 'updatedAt'>, product: ProductEvents): boolean {
    const { status } = product.licenses.get(row.id)!;
    return row.updatedAt.getTime() < status.version && row.status !== 'revoked';
  }

  /** A license whose key pair is gone keeps its old file; its state is restored all the same. */
  private async signAgain(
    manager: EntityManager,
    row: LicenseEntity,
    product: CatalogProductEntity,
    now: Date,
  ): Promise<void> {
    try {
      await this.signer.sign(manager, row, product, now);
    } catch (error) {
      this.logger.warn({
        msg: 'a replayed license could not be signed again; it keeps its earlier file',
        license_id: row.id,
        err: String(error),
      });
    }
  }
}

/** The state an event carries, or undefined when it does not decode. */
function snapshotOf(data: Uint8Array): Snapshot | undefined {
  const decoded = decodeMessage(LicenseEventRecord, data);
  if ('problem' in decoded) return undefined;
  const status = decoded.value.serial_status;
  const view = (decoded.value as LicenseEventRecord & { data?: unknown }).data;
  return { status, fields: fieldsOf(view) };
}

function fieldsOf(view: unknown): SnapshotFields | undefined {
  if (typeof view !== 'object' || view === null) return undefined;
  const { customer_id, customer_email, features, hardware_binding } = view as Record<string, unknown>;
  const text = (value: unknown) => value === null || typeof value === 'string';
  const binding =
    hardware_binding === null ||
    (typeof hardware_binding === 'object' &&
      typeof (hardware_binding as { fingerprint?: unknown }).fingerprint === 'string');
  if (!text(customer_id) || !text(customer_email) || !binding) return undefined;
  if (!Array.isArray(features) || !features.every((feature) => typeof feature === 'string')) return undefined;
  return {
    customer_id: customer_id as string | null,
    customer_email: customer_email as string | null,
    features: features as string[],
    hardware_binding:
      hardware_binding === null
        ? null
        : { fingerprint: (hardware_binding as { fingerprint: string }).fingerprint },
  };
}

function applySnapshot(row: LicenseEntity, { status, fields }: Snapshot): void {
  row.status = status.status;
  row.revokedAt = status.revoked_at ? new Date(status.revoked_at) : null;
  row.validUntil = status.valid_until ? new Date(status.valid_until) : null;
  row.maxSeats = status.max_seats;
  row.updatedAt = new Date(status.version);
  if (fields) {
    row.customerId = fields.customer_id;
    row.customerEmail = fields.customer_email;
    row.features = fields.features;
    row.hardwareBinding = fields.hardware_binding;
  }
}

/** What the license file states, as one comparable string. */
function signedFields(row: LicenseEntity): string {
  return JSON.stringify([
    row.customerId,
    row.customerEmail,
    row.features,
    row.hardwareBinding,
    row.maxSeats,
    row.validFrom.toISOString(),
    row.validUntil?.toISOString() ?? null,
  ]);
}
