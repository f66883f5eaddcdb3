import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The entitlements a policy grants, its max_uses and uses_reset, and on licenses when their count
 * of uses began. Expand only: the previous release neither reads nor writes the new table and
 * columns; the new columns are nullable, and a license it inserts counts from before any period.
 */
export class AddPolicyEntitlementsAndUsage1799300000000 implements MigrationInterface {
  name = 'AddPolicyEntitlementsAndUsage1799300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."policy_entitlements" ("policy_id" uuid NOT NULL, "entitlement_id" uuid NOT NULL, "org_id" uuid NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_policy_entitlements" PRIMARY KEY ("policy_id", "entitlement_id"))`);
    await queryRunner.query(`CREATE INDEX "ix_policy_entitlements_entitlement" ON "license"."policy_entitlements" ("entitlement_id") `);
    await queryRunner.query(`ALTER TABLE "license"."policies" ADD "max_uses" integer`);
    await queryRunner.query(`ALTER TABLE "license"."policies" ADD "uses_reset" character varying(10)`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "uses_period_start" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "license"."policies" ADD CONSTRAINT "ck_policies_max_uses" CHECK (max_uses IS NULL OR max_uses >= 0)`);
    await queryRunner.query(`ALTER TABLE "license"."policies" ADD CONSTRAINT "ck_policies_uses_reset" CHECK (uses_reset IS NULL OR uses_reset IN ('day', 'week', 'month'))`);
    await queryRunner.query(`ALTER TABLE "license"."policy_entitlements" ADD CONSTRAINT "fk_policy_entitlements_policy" FOREIGN KEY ("policy_id") REFERENCES "license"."policies"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."policy_entitlements" ADD CONSTRAINT "fk_policy_entitlements_entitlement" FOREIGN KEY ("entitlement_id") REFERENCES "license"."entitlements"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."policy_entitlements" DROP CONSTRAINT "fk_policy_entitlements_entitlement"`);
    await queryRunner.query(`ALTER TABLE "license"."policy_entitlements" DROP CONSTRAINT "fk_policy_entitlements_policy"`);
    await queryRunner.query(`ALTER TABLE "license"."policies" DROP CONSTRAINT "ck_policies_uses_reset"`);
    await queryRunner.query(`ALTER TABLE "license"."policies" DROP CONSTRAINT "ck_policies_max_uses"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "uses_period_start"`);
    await queryRunner.query(`ALTER TABLE "license"."policies" DROP COLUMN "uses_reset"`);
    await queryRunner.query(`ALTER TABLE "license"."policies" DROP COLUMN "max_uses"`);
    await queryRunner.query(`DROP INDEX "license"."ix_policy_entitlements_entitlement"`);
    await queryRunner.query(`DROP TABLE "license"."policy_entitlements"`);
  }
}
