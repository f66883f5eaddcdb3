import { DynamicModule, Module } from '@nestjs/common';
import { MasterKeyVault } from '@licensing/shared/crypto';
import { KeyPairResealJob } from './key-pair-reseal.job';
import { SigningKeysService } from './signing-keys.service';

/** Key material: the vault that seals private keys, the cache of parsed keys, and their re-sealing. */
@Module({})
export class SigningModule {
  static forRoot(masterKeys: string): DynamicModule {
    return {
      module: SigningModule,
      global: true,
      providers: [
        { provide: MasterKeyVault, useValue: new MasterKeyVault(masterKeys, 'SIGNING_MASTER_KEYS') },
        SigningKeysService,
        KeyPairResealJob,
      ],
      exports: [MasterKeyVault, SigningKeysService],
    };
  }
}
