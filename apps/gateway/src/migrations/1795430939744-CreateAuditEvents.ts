import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateAuditEvents1795430939744 implements MigrationInterface {
  name = 'CreateAuditEvents1795430939744';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."audit_events" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "action" character varying(20) NOT NULL, "resource_type" character varying(40) NOT NULL, "resource_id" uuid NOT NULL, "actor_api_key_id" uuid NOT NULL, "actor_prefix" character varying(10) NOT NULL, "actor_name" character varying(255) NOT NULL, "request_id" character varying(128) NOT NULL, "ip" character varying(64), "changes" jsonb NOT NULL, CONSTRAINT "ck_audit_events_action" CHECK (action IN ('created', 'updated', 'revoked', 'deleted', 'suspended', 'reinstated', 'rotated')), CONSTRAINT "PK_910f64d901a5c3e9878f0d4a407" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_audit_events_org_resource" ON "identity"."audit_events" ("org_id", "resource_id", "occurred_at") `);
    await queryRunner.query(`CREATE INDEX "ix_audit_events_org_occurred" ON "identity"."audit_events" ("org_id", "occurred_at", "id") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "identity"."ix_audit_events_org_occurred"`);
    await queryRunner.query(`DROP INDEX "identity"."ix_audit_events_org_resource"`);
    await queryRunner.query(`DROP TABLE "identity"."audit_events"`);
  }
}
