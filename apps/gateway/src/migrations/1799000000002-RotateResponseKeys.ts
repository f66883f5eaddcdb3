import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Response keys that rotate: a status per key (`next`, `active`, `retired`) instead of one key per
 * organization. The existing keys become the active ones.
 */
export class RotateResponseKeys1799000000002 implements MigrationInterface {
  name = 'RotateResponseKeys1799000000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "identity"."response_keys" ADD "status" character varying(10) NOT NULL DEFAULT 'active'`,
    );
    await queryRunner.query(`ALTER TABLE "identity"."response_keys" DROP CONSTRAINT "uq_response_keys_org"`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_response_keys_org_next" ON "identity"."response_keys" ("org_id") WHERE status = 'next'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_response_keys_org_active" ON "identity"."response_keys" ("org_id") WHERE status = 'active'`,
    );
    await queryRunner.query(
      `ALTER TABLE "identity"."response_keys" ADD CONSTRAINT "ck_response_keys_status" CHECK (status IN ('next', 'active', 'retired'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "identity"."response_keys" WHERE status <> 'active'`);
    await queryRunner.query(`ALTER TABLE "identity"."response_keys" DROP CONSTRAINT "ck_response_keys_status"`);
    await queryRunner.query(`DROP INDEX "identity"."uq_response_keys_org_active"`);
    await queryRunner.query(`DROP INDEX "identity"."uq_response_keys_org_next"`);
    await queryRunner.query(
      `ALTER TABLE "identity"."response_keys" ADD CONSTRAINT "uq_response_keys_org" UNIQUE ("org_id")`,
    );
    await queryRunner.query(`ALTER TABLE "identity"."response_keys" DROP COLUMN "status"`);
  }
}
