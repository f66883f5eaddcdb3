import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UsageIncrementedRecord } from '@licensing/contracts';
import { MeteredUseEntity } from './metered-use.entity';

interface MeteredUsesRow {
  increments: number;
  uses_counted: string;
  last_increment_at: Date | null;
}

/** The accepted usage increments, one row per event. */
@Injectable()
export class MeteredUsesRepository {
  private readonly table: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.table = dataSource.getMetadata(MeteredUseEntity).tablePath;
  }

  /**
   * Stores a batch in one statement; an event stored already is skipped, so a redelivery counts
   * nothing. Returns how many rows were new.
   */
  async insert(events: UsageIncrementedRecord[]): Promise<number> {
    if (events.length === 0) return 0;
    const rows = events.map((event) => ({
      event_id: event.id,
      org_id: event.org_id,
      license_id: event.data.id,
      product_id: event.data.product_id,
      increment: event.data.increment,
      uses: event.data.uses,
      occurred_at: event.occurred_at,
    }));
    const inserted = await this.dataSource.query<unknown[]>(
      `INSERT INTO ${this.table} (event_id, org_id, license_id, product_id, increment, uses, occurred_at)
       SELECT event_id, org_id, license_id, product_id, increment, uses, occurred_at
         FROM jsonb_to_recordset($1::jsonb) AS r(event_id uuid, org_id uuid, license_id uuid, product_id uuid,
                                                 increment integer, uses bigint, occurred_at timestamptz)
       ON CONFLICT (event_id) DO NOTHING
       RETURNING 1`,
      [JSON.stringify(rows)],
    );
    return inserted.length;
  }

  /** A license's increments since `since`, optionally of one product only. */
  async ofLicense(
    orgId: string,
    licenseId: string,
    productId: string | undefined,
    since: Date,
  ): Promise<MeteredUsesRow> {
    const [row] = await this.dataSource.query<MeteredUsesRow[]>(
      `SELECT count(*)::int AS increments, coalesce(sum(increment), 0)::text AS uses_counted,
              max(occurred_at) AS last_increment_at
         FROM ${this.table}
        WHERE org_id = $1 AND license_id = $2 AND occurred_at >= $3 AND ($4::uuid IS NULL OR product_id = $4)`,
      [orgId, licenseId, since, productId ?? null],
    );
    return row!;
  }
}
