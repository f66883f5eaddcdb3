import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { ResealJob, SealedTable } from '@licensing/shared/database';
import { WEBHOOK_CONFIG, WebhookServiceConfig } from '../config';

/** Seals every endpoint's secrets (the current one and a previous one still valid) with the newest WEBHOOK_MASTER_KEYS key. */
@Injectable()
export class EndpointResealJob extends ResealJob {
  protected readonly name = 'reseal-webhook-secrets';
  protected readonly intervalMs: number;
  protected readonly sealed: SealedTable = {
    table: 'webhook.endpoints',
    secrets: [
      { ciphertext: 'secret_ciphertext', version: 'secret_key_version' },
      { ciphertext: 'previous_secret_ciphertext', version: 'previous_secret_key_version' },
    ],
  };

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(WEBHOOK_CONFIG) config: WebhookServiceConfig,
    protected readonly vault: MasterKeyVault,
  ) {
    super(dataSource);
    this.intervalMs = config.MASTER_KEY_RESEAL_MS;
  }
}
