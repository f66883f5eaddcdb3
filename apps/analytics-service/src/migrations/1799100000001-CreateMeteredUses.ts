import { MigrationInterface, QueryRunner } from 'typeorm';

/** Accepted usage increments of licenses, one row per event, keyed by the event id. */
export class CreateMeteredUses1799100000001 implements MigrationInterface {
  name = 'CreateMeteredUses1799100000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "analytics"."metered_uses" ("event_id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "product_id" uuid NOT NULL, "increment" integer NOT NULL, "uses" bigint NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_metered_uses" PRIMARY KEY ("event_id"))`);
    await queryRunner.query(`CREATE INDEX "ix_metered_uses_license_occurred" ON "analytics"."metered_uses" ("org_id", "license_id", "occurred_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "analytics"."ix_metered_uses_license_occurred"`);
    await queryRunner.query(`DROP TABLE "analytics"."metered_uses"`);
  }
}
