import { MigrationInterface, QueryRunner } from 'typeorm';

/** How far the events stream reached: where a database restored from a backup replays license events from. */
export class AddStreamCheckpoints1799000000003 implements MigrationInterface {
  name = 'AddStreamCheckpoints1799000000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."stream_checkpoints" ("stream" character varying(64) NOT NULL, "seq" bigint NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a1f6d5dc1eeaa7b4b78a59bb15a" PRIMARY KEY ("stream"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "license"."stream_checkpoints"`);
  }
}
