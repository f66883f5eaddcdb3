import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddOrganizationRateLimits1795430945058 implements MigrationInterface {
  name = 'AddOrganizationRateLimits1795430945058';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."organizations" ADD "rate_limits" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."organizations" DROP COLUMN "rate_limits"`);
  }
}
