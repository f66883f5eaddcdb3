import { Module } from '@nestjs/common';
import { ResponseKeysController } from './response-keys.controller';
import { ResponseKeysService } from './response-keys.service';

/** Signed online answers: the organizations' response keys, and the route that publishes them. */
@Module({
  controllers: [ResponseKeysController],
  providers: [ResponseKeysService],
  exports: [ResponseKeysService],
})
export class SignedAnswersModule {}
