import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWebhooks1795441221771 implements MigrationInterface {
  name = 'CreateWebhooks1795441221771';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "webhook"."outbox_events" ("seq" BIGSERIAL NOT NULL, "id" uuid NOT NULL, "subject" character varying(255) NOT NULL, "payload" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_outbox_events_id" UNIQUE ("id"), CONSTRAINT "PK_cc48a1566b3b842a82f0b2615c8" PRIMARY KEY ("seq"))`);
    await queryRunner.query(`CREATE TABLE "webhook"."endpoints" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "url" character varying(2048) NOT NULL, "events" text array NOT NULL, "description" character varying(500), "enabled" boolean NOT NULL DEFAULT true, "disabled_reason" character varying(200), "secret_ciphertext" bytea NOT NULL, "secret_key_version" character varying(64) NOT NULL, "previous_secret_ciphertext" bytea, "previous_secret_key_version" character varying(64), "previous_secret_expires_at" TIMESTAMP(3) WITH TIME ZONE, "failing_since" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_70835610dfa54ad5d990e02f70a" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_endpoints_org_created" ON "webhook"."endpoints" ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE TABLE "webhook"."events" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "type" character varying(64) NOT NULL, "payload" text NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "webhook"."deliveries" ("id" uuid NOT NULL, "endpoint_id" uuid NOT NULL, "event_id" uuid NOT NULL, "org_id" uuid NOT NULL, "event_type" character varying(64) NOT NULL, "status" character varying(20) NOT NULL, "attempts" integer NOT NULL DEFAULT '0', "round_attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_status_code" integer, "last_error" character varying(500), "last_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_duration_ms" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "delivered_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_deliveries_endpoint_event" UNIQUE ("endpoint_id", "event_id"), CONSTRAINT "ck_deliveries_status" CHECK (status IN ('pending', 'delivered', 'failed')), CONSTRAINT "PK_a6ef225c5c5f0974e503bfb731f" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_deliveries_event" ON "webhook"."deliveries" ("event_id") `);
    await queryRunner.query(`CREATE INDEX "ix_deliveries_endpoint_due" ON "webhook"."deliveries" ("endpoint_id", "next_attempt_at") WHERE status = 'pending'`);
    await queryRunner.query(`CREATE INDEX "ix_deliveries_due" ON "webhook"."deliveries" ("next_attempt_at") WHERE status = 'pending'`);
    await queryRunner.query(`CREATE INDEX "ix_deliveries_endpoint_created" ON "webhook"."deliveries" ("endpoint_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "webhook"."deliveries" ADD CONSTRAINT "fk_deliveries_endpoint" FOREIGN KEY ("endpoint_id") REFERENCES "webhook"."endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "webhook"."deliveries" ADD CONSTRAINT "fk_deliveries_event" FOREIGN KEY ("event_id") REFERENCES "webhook"."events"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook"."deliveries" DROP CONSTRAINT "fk_deliveries_event"`);
    await queryRunner.query(`ALTER TABLE "webhook"."deliveries" DROP CONSTRAINT "fk_deliveries_endpoint"`);
    await queryRunner.query(`DROP INDEX "webhook"."ix_deliveries_endpoint_created"`);
    await queryRunner.query(`DROP INDEX "webhook"."ix_deliveries_due"`);
    await queryRunner.query(`DROP INDEX "webhook"."ix_deliveries_endpoint_due"`);
    await queryRunner.query(`DROP INDEX "webhook"."ix_deliveries_event"`);
    await queryRunner.query(`DROP TABLE "webhook"."deliveries"`);
    await queryRunner.query(`DROP TABLE "webhook"."events"`);
    await queryRunner.query(`DROP INDEX "webhook"."ix_endpoints_org_created"`);
    await queryRunner.query(`DROP TABLE "webhook"."endpoints"`);
    await queryRunner.query(`DROP TABLE "webhook"."outbox_events"`);
  }
}
