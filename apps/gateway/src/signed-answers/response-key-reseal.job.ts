import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { ResealJob, SealedTable } from '@licensing/shared/database';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';

/** Seals every response key's private half with the newest RESPONSE_MASTER_KEYS key, in the background. */
@Injectable()
export class ResponseKeyResealJob extends ResealJob {
  protected readonly name = 'reseal-response-keys';
  protected readonly intervalMs: number;
  protected readonly vault: MasterKeyVault;
  protected readonly sealed: SealedTable = {
    table: 'identity.response_keys',
    secrets: [{ ciphertext: 'private_key_ciphertext', version: 'master_key_version' }],
  };

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    super(dataSource);
    this.intervalMs = config.MASTER_KEY_RESEAL_MS;
    this.vault = new MasterKeyVault(config.RESPONSE_MASTER_KEYS, 'RESPONSE_MASTER_KEYS');
  }
}
