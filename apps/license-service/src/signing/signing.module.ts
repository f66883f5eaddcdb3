import { DynamicModule, Module } from '@nestjs/common';
import { PrivateKeyVault } from './private-key-vault';
import { SigningKeysService } from './signing-keys.service';

/** Key material: the vault that seals private keys and the cache of parsed keys. */
@Module({})
export class SigningModule {
  static forRoot(masterKeys: string): DynamicModule {
    return {
      module: SigningModule,
      global: true,
      providers: [
        { provide: PrivateKeyVault, useValue: new PrivateKeyVault(masterKeys) },
        SigningKeysService,
      ],
      exports: [PrivateKeyVault, SigningKeysService],
    };
  }
}
