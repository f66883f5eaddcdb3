import { DataSource, EntityManager } from 'typeorm';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { ExclusiveJob } from './exclusive-job';

/** Where a table keeps its sealed secrets: the schema-qualified table and each (ciphertext, version) pair. */
export interface SealedTable {
  table: string;
  /** The pairs of columns; a pair whose version is null holds nothing. */
  secrets: { ciphertext: string; version: string }[];
}

/**
 * Re-seals under the vault's current master key up to `limit` rows of `sealed` that hold a secret
 * sealed with one of its older keys, and returns how many it re-sealed. The row's id is the associated data,
 * as when it was sealed. Rows another pass holds are skipped (`SKIP LOCKED`).
 */
export async function resealBatch(
  manager: EntityManager,
  vault: MasterKeyVault,
  sealed: SealedTable,
  limit: number,
): Promise<number> {
  const older = vault.olderVersions;
  if (older.length === 0) return 0;
  // Only rows sealed with a key this vault knows and that is not its newest: a replica that does not
  // know the newest key yet (a rollout under way) never moves a row back.
  const stale = sealed.secrets.map(({ version }) => `${version} = ANY($1::text[])`).join(' OR ');
  const columns = sealed.secrets.flatMap(({ ciphertext, version }) => [ciphertext, version]).join(', ');
  const rows = (await manager.query(
    `SELECT id, ${columns} FROM ${sealed.table} WHERE ${stale} ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [older, limit],
  )) as Record<string, unknown>[];
  for (const row of rows) {
    const id = row['id'] as string;
    const changes: string[] = [];
    const values: unknown[] = [id];
    for (const { ciphertext, version } of sealed.secrets) {
      const was = row[version] as string | null;
      if (was === null || !older.includes(was)) continue;
      const plaintext = vault.open(id, { ciphertext: row[ciphertext] as Buffer, version: was });
      const again = vault.seal(id, plaintext);
      values.push(again.ciphertext, again.version);
      changes.push(`${ciphertext} = $${values.length - 1}`, `${version} = $${values.length}`);
    }
    await manager.query(`UPDATE ${sealed.table} SET ${changes.join(', ')} WHERE id = $1`, values);
  }
  return rows.length;
}

/**
 * Moves a table's secrets to the newest master key, in the background, one batch at a time and one
 * replica at a time: after a new key is put first in the setting (`v2:…,v1:…`) and the service
 * restarted, every row is sealed with it within a few passes, and the old key can be removed from
 * the setting without downtime. With a single key in the setting it does nothing at all.
 */
export abstract class ResealJob extends ExclusiveJob {
  protected abstract readonly vault: MasterKeyVault;
  protected abstract readonly sealed: SealedTable;

  constructor(dataSource: DataSource) {
    super(dataSource);
  }

  protected pass(manager: EntityManager): Promise<number> {
    return resealBatch(manager, this.vault, this.sealed, this.batchSize);
  }
}
