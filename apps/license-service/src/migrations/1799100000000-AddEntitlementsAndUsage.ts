import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The entitlement catalog, the entitlements each license holds, and metered usage on licenses.
 * Expand only: the previous release inserts licenses without `uses` (the default is 0) and never
 * reads the new tables.
 */
export class AddEntitlementsAndUsage1799100000000 implements MigrationInterface {
  name = 'AddEntitlementsAndUsage1799100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."entitlements" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "code" character varying(100) NOT NULL, "name" character varying(255) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_entitlements_org_code" UNIQUE ("org_id", "code"), CONSTRAINT "PK_6a45cb6f5747d49365a879bffde" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_entitlements_org_created" ON "license"."entitlements" ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE TABLE "license"."license_entitlements" ("license_id" uuid NOT NULL, "entitlement_id" uuid NOT NULL, "org_id" uuid NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_license_entitlements" PRIMARY KEY ("license_id", "entitlement_id"))`);
    await queryRunner.query(`CREATE INDEX "ix_license_entitlements_entitlement" ON "license"."license_entitlements" ("entitlement_id") `);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "uses" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "max_uses" bigint`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD CONSTRAINT "ck_licenses_max_uses" CHECK (max_uses IS NULL OR max_uses >= 0)`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD CONSTRAINT "ck_licenses_uses" CHECK (uses >= 0)`);
    await queryRunner.query(`ALTER TABLE "license"."license_entitlements" ADD CONSTRAINT "fk_license_entitlements_license" FOREIGN KEY ("license_id") REFERENCES "license"."licenses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."license_entitlements" ADD CONSTRAINT "fk_license_entitlements_entitlement" FOREIGN KEY ("entitlement_id") REFERENCES "license"."entitlements"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."license_entitlements" DROP CONSTRAINT "fk_license_entitlements_entitlement"`);
    await queryRunner.query(`ALTER TABLE "license"."license_entitlements" DROP CONSTRAINT "fk_license_entitlements_license"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP CONSTRAINT "ck_licenses_uses"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP CONSTRAINT "ck_licenses_max_uses"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "max_uses"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "uses"`);
    await queryRunner.query(`DROP INDEX "license"."ix_license_entitlements_entitlement"`);
    await queryRunner.query(`DROP TABLE "license"."license_entitlements"`);
    await queryRunner.query(`DROP INDEX "license"."ix_entitlements_org_created"`);
    await queryRunner.query(`DROP TABLE "license"."entitlements"`);
  }
}
