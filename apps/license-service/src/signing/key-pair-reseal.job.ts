import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { ResealJob, SealedTable } from '@licensing/shared/database';
import { LICENSE_SERVICE_CONFIG, LicenseServiceConfig } from '../config';

/** Seals every key pair's private key with the newest SIGNING_MASTER_KEYS key, in the background. */
@Injectable()
export class KeyPairResealJob extends ResealJob {
  protected readonly name = 'reseal-key-pairs';
  protected readonly intervalMs: number;
  protected readonly sealed: SealedTable = {
    table: 'license.key_pairs',
    secrets: [{ ciphertext: 'private_key_ciphertext', version: 'master_key_version' }],
  };

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(LICENSE_SERVICE_CONFIG) config: LicenseServiceConfig,
    protected readonly vault: MasterKeyVault,
  ) {
    super(dataSource);
    this.intervalMs = config.MASTER_KEY_RESEAL_MS;
  }
}
