import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddRevocationLists1795500000000 implements MigrationInterface {
  name = 'AddRevocationLists1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."revocation_lists" ("product_id" uuid NOT NULL, "org_id" uuid NOT NULL, "version" bigint NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_revocation_lists" PRIMARY KEY ("product_id"))`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "list_version" bigint`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "list_changed_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`CREATE INDEX "ix_licenses_product_list_version" ON "license"."licenses" ("product_id", "list_version") `);
    // Licenses that were already not active: version 1 of their product's list, so that a delta
    // since 0 holds them as the full list does.
    await queryRunner.query(`UPDATE "license"."licenses" SET "list_version" = 1, "list_changed_at" = COALESCE("revoked_at", "updated_at") WHERE "status" <> 'active'`);
    await queryRunner.query(`INSERT INTO "license"."revocation_lists" ("product_id", "org_id", "version", "updated_at") SELECT "product_id", MIN("org_id"::text)::uuid, 1, now() FROM "license"."licenses" WHERE "list_version" IS NOT NULL GROUP BY "product_id"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_product_list_version"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "list_changed_at"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "list_version"`);
    await queryRunner.query(`DROP TABLE "license"."revocation_lists"`);
  }
}
