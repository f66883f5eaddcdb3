import { Module } from '@nestjs/common';
import { KeyPairsController } from './key-pairs.controller';
import { KeyPairsService } from './key-pairs.service';

@Module({
  controllers: [KeyPairsController],
  providers: [KeyPairsService],
})
export class KeyPairsModule {}
