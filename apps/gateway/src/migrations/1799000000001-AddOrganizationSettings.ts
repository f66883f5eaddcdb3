import { MigrationInterface, QueryRunner } from 'typeorm';

/** The settings an organization's admin changes: client keys on license actions, and the checkout TTL. */
export class AddOrganizationSettings1799000000001 implements MigrationInterface {
  name = 'AddOrganizationSettings1799000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "identity"."organizations" ADD "client_keys_license_actions" boolean NOT NULL DEFAULT true`,
    );
    await queryRunner.query(
      `ALTER TABLE "identity"."organizations" ADD "checkout_ttl_seconds" integer NOT NULL DEFAULT '2592000'`,
    );
    await queryRunner.query(
      `ALTER TABLE "identity"."organizations" ADD CONSTRAINT "ck_organizations_checkout_ttl" CHECK (checkout_ttl_seconds BETWEEN 3600 AND 31536000)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."organizations" DROP CONSTRAINT "ck_organizations_checkout_ttl"`);
    await queryRunner.query(`ALTER TABLE "identity"."organizations" DROP COLUMN "checkout_ttl_seconds"`);
    await queryRunner.query(`ALTER TABLE "identity"."organizations" DROP COLUMN "client_keys_license_actions"`);
  }
}
