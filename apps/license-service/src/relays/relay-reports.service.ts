import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  ImportRelayReportDto,
  RelayReportImportView,
  Streams,
  SyncReportRecord,
  syncReportSubject,
} from '@licensing/contracts';
import { parsePublicKey, verifyJwsSignature } from '@licensing/license-format';
import { DomainError } from '@licensing/shared/errors';
import { BusClient, ensureStream } from '@licensing/shared/messaging';
import { RelayFileEntity } from './relay-file.entity';
import { decodeReport, invalid, leaseRecords, readRelayReport } from './relay-report';

/** Records published at once: JetStream acknowledges each, and a report holds up to 10,000. */
const PUBLISH_CHUNK = 500;

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
    const payload = readRelayReport(decoded.payload);
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
