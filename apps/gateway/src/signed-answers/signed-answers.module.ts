import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ResponseKeysController } from './response-keys.controller';
import { ResponseKeyResealJob } from './response-key-reseal.job';
import { ResponseKeysService } from './response-keys.service';

/** Signed online answers: the organizations' response keys, the route that publishes them, and their rotation. */
@Module({
  imports: [AuditModule],
  controllers: [ResponseKeysController],
  providers: [ResponseKeysService, ResponseKeyResealJob],
  exports: [ResponseKeysService],
})
export class SignedAnswersModule {}
