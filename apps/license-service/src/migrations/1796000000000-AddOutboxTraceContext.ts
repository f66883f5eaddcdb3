import { MigrationInterface, QueryRunner } from 'typeorm';

/** The trace of the request that wrote an event, for the relay to publish it in (nullable: expand only). */
export class AddOutboxTraceContext1796000000000 implements MigrationInterface {
  name = 'AddOutboxTraceContext1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."outbox_events" ADD "trace_context" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."outbox_events" DROP COLUMN "trace_context"`);
  }
}
