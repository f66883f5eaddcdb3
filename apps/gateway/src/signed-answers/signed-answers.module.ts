import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ResponseKeyResealJob } from './response-key-reseal.job';
import { ResponseKeysService } from './response-keys.service';

/** Signed online answers: the organizations' response keys and their rotation. */
@Module({
  imports: [AuditModule],
  providers: [ResponseKeysService, ResponseKeyResealJob],
  exports: [ResponseKeysService],
})
export class SignedAnswersModule {}
