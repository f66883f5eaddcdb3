import { Module } from '@nestjs/common';
import { PoliciesController } from './policies.controller';
import { PoliciesService } from './policies.service';

/** Policies: a product's licensing model, reused by many licenses. */
@Module({ controllers: [PoliciesController], providers: [PoliciesService] })
export class PoliciesModule {}
