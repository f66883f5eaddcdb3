import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddOutbox1795376756137 implements MigrationInterface {
  name = 'AddOutbox1795376756137';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."outbox_events" ("seq" BIGSERIAL NOT NULL, "id" uuid NOT NULL, "subject" character varying(255) NOT NULL, "payload" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_outbox_events_id" UNIQUE ("id"), CONSTRAINT "PK_cc48a1566b3b842a82f0b2615c8" PRIMARY KEY ("seq"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "license"."outbox_events"`);
  }
}
