import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSyncReports1795377014165 implements MigrationInterface {
  name = 'CreateSyncReports1795377014165';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "analytics"."sync_reports" ("report_id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "product_id" uuid NOT NULL, "serial" character varying(200) NOT NULL, "hardware_fingerprint" character varying(512), "app_version" character varying(64), "features_used" text array NOT NULL DEFAULT '{}', "seats_in_use" integer, "status" character varying(20) NOT NULL, "received_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "ck_sync_reports_seats" CHECK (seats_in_use IS NULL OR seats_in_use >= 0), CONSTRAINT "pk_sync_reports" PRIMARY KEY ("report_id"))`);
    await queryRunner.query(`CREATE INDEX "ix_sync_reports_license_received" ON "analytics"."sync_reports" ("license_id", "received_at") `);
    await queryRunner.query(`CREATE INDEX "ix_sync_reports_org_product_received" ON "analytics"."sync_reports" ("org_id", "product_id", "received_at") `);
    await queryRunner.query(`CREATE INDEX "ix_sync_reports_org_received" ON "analytics"."sync_reports" ("org_id", "received_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "analytics"."ix_sync_reports_org_received"`);
    await queryRunner.query(`DROP INDEX "analytics"."ix_sync_reports_org_product_received"`);
    await queryRunner.query(`DROP INDEX "analytics"."ix_sync_reports_license_received"`);
    await queryRunner.query(`DROP TABLE "analytics"."sync_reports"`);
  }
}
