import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIdempotencyKeys1795430887909 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1795430887909';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."idempotency_keys" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "key" character varying(255) NOT NULL, "route" character varying(255) NOT NULL, "request_hash" character(64) NOT NULL, "claim_token" uuid NOT NULL, "locked_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "status" smallint, "response_body" json, "response_headers" jsonb, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_idempotency_keys_org_key" UNIQUE ("org_id", "key"), CONSTRAINT "ck_idempotency_keys_status" CHECK (status IS NULL OR status BETWEEN 200 AND 499), CONSTRAINT "PK_8ad20779ad0411107a56e53d0f6" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_idempotency_keys_expires" ON "identity"."idempotency_keys" ("expires_at") `);
    await queryRunner.query(`ALTER TABLE "identity"."idempotency_keys" ADD CONSTRAINT "fk_idempotency_keys_org" FOREIGN KEY ("org_id") REFERENCES "identity"."organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."idempotency_keys" DROP CONSTRAINT "fk_idempotency_keys_org"`);
    await queryRunner.query(`DROP INDEX "identity"."ix_idempotency_keys_expires"`);
    await queryRunner.query(`DROP TABLE "identity"."idempotency_keys"`);
  }
}
