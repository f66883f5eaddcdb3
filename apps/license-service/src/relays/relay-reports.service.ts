import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { v5 as nameBasedUuid } from 'uuid';
import {
  ImportRelayReportDto,
  RELAY_REPORT_TYP,
  RelayLeaseRecord,
  RelayReportImportView,
  RelayReportPayload,
  Streams,
  SyncReportRecord,
  SyncStatus,
  effectiveStatus,
  syncReportSubject,
} from '@licensing/contracts';
import {
  DecodedJws,
  MalformedJwsError,
  decodeJws,
  parsePublicKey,
  verifyJwsSignature,
} from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { BusClient, ensureStream, validateRecord } from '@licensing/shared/messaging';
import { LicenseEntity } from '../licenses/license.entity';
import { RelayFileEntity } from './relay-file.entity';

/** Records published at once: JetStream acknowledges each, and a report holds up to 10,000. */
const PUBLISH_CHUNK = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Imports a relay's usage report: verified with the public key its relay file was issued to, each
 * lease becomes one usage record on the sync reports stream that analytics counts, as a sync's
 * report does. A lease's record id is a UUID v5 of the lease id in the relay file's namespace, so
 * a lease uploaded again, in the same file or another, is counted once.
 */
@Injectable()
export class RelayReportsService {
  private readonly logger = new Logger(RelayReportsService.name);
  private stream?: Promise<unknown>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: BusClient,
  ) {}

  async import(orgId: string, { report }: ImportRelayReportDto): Promise<RelayReportImportView> {
    const decoded = decodeReport(report);
    const relayFileId = decoded.header.kid as string;
    const file = await this.dataSource.getRepository(RelayFileEntity).findOne({
      where: { id: relayFileId, orgId },
      relations: { license: true },
    });
    if (!file?.license) throw DomainError.notFound('Relay file', relayFileId);
    if (!verifyJwsSignature(decoded, parsePublicKey(file.publicKey))) {
      throw invalid("the signature does not verify with the relay file's public key");
    }
    const checked = validateRecord(RelayReportPayload, decoded.payload);
    if ('problem' in checked) throw invalid(`the payload is not a relay report (${checked.problem})`);
    const payload = checked.value;
    if (payload.relay_file_id.toLowerCase() !== file.id) {
      throw invalid('the payload names another relay file than its header');
    }
    if (payload.serial !== file.license.serial) {
      throw new DomainError(
        'report_serial_mismatch',
        `The report's serial ${payload.serial} is not the serial of relay file ${file.id}'s license`,
      );
    }
    const now = new Date();
    const records = leaseRecords(file, file.license, payload.leases, now);
    await this.publish(orgId, records);
    this.logger.log({ msg: 'relay report imported', relay_file_id: file.id, leases: payload.leases.length });
    return {
      report_id: payload.report_id,
      relay_file_id: file.id,
      leases: payload.leases.length,
      counted: records.length,
    };
  }

  /** Answers once JetStream has stored every record: then analytics will count each. */
  private async publish(orgId: string, records: SyncReportRecord[]): Promise<void> {
    try {
      // The revocation service makes the stream at boot; a license service may start first.
      this.stream ??= ensureStream(
        this.bus.connection(),
        this.bus.namespace,
        Streams.syncReports,
        this.bus.streamReplicas,
      );
      await this.stream;
      for (let i = 0; i < records.length; i += PUBLISH_CHUNK) {
        await Promise.all(
          records
            .slice(i, i + PUBLISH_CHUNK)
            .map((record) =>
              this.bus.publishDurable(syncReportSubject(orgId), JSON.stringify(record), record.report_id),
            ),
        );
      }
    } catch (error) {
      this.stream = undefined;
      this.logger.warn({ msg: 'relay report not stored', err: String(error) });
      throw new DomainError('unavailable', 'The report could not be stored; upload it again later');
    }
  }
}

function invalid(why: string): DomainError {
  return new DomainError('report_signature_invalid', `The relay report is invalid: ${why}`);
}

/** The JWS, if it is shaped as a relay report's: EdDSA, its type, and a relay file id as `kid`. */
function decodeReport(report: string): DecodedJws {
  let decoded: DecodedJws;
  try {
    decoded = decodeJws(report.trim());
  } catch (error) {
    if (error instanceof MalformedJwsError) throw invalid(error.message);
    throw error;
  }
  const { typ, kid } = decoded.header;
  if (typ !== RELAY_REPORT_TYP) throw invalid(`its typ is not ${RELAY_REPORT_TYP}`);
  if (typeof kid !== 'string' || !UUID.test(kid)) throw invalid('its kid is not a relay file id');
  return { ...decoded, header: { ...decoded.header, kid: kid.toLowerCase() } };
}

/**
 * One usage record per distinct lease: received when the lease began (never later than now, so
 * a relay's clock ahead cannot place usage in the future), for the machine that held it, with the
 * seats in use right after it began. The status is the license's now, as a sync's is.
 */
function leaseRecords(
  file: RelayFileEntity,
  license: LicenseEntity,
  leases: RelayLeaseRecord[],
  now: Date,
): SyncReportRecord[] {
  const effective = effectiveStatus(license, now);
  const status: SyncStatus = effective === 'active' ? 'ok' : effective;
  const records = new Map<string, SyncReportRecord>();
  for (const lease of leases) {
    const reportId = nameBasedUuid(lease.id.toLowerCase(), file.id);
    if (records.has(reportId)) continue;
    const leasedAtMs = Date.parse(lease.leased_at);
    if (!Number.isFinite(leasedAtMs)) throw invalid(`lease ${lease.id} has no readable leased_at`);
    const leasedAt = Math.min(leasedAtMs, now.getTime());
    records.set(reportId, {
      report_id: reportId,
      org_id: file.orgId,
      license_id: license.id,
      product_id: license.productId,
      serial: license.serial,
      hardware_fingerprint: lease.fingerprint,
      app_version: null,
      features_used: [],
      seats_in_use: lease.seats_in_use,
      status,
      received_at: new Date(leasedAt).toISOString(),
    });
  }
  return [...records.values()];
}
