import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIdentity1795375819351 implements MigrationInterface {
  name = 'CreateIdentity1795375819351';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."organizations" ("id" uuid NOT NULL, "name" character varying(255) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_organizations_name" UNIQUE ("name"), CONSTRAINT "PK_6b031fcd0863e3f6b44230163f9" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "identity"."api_keys" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "name" character varying(255) NOT NULL, "scopes" text array NOT NULL, "key_hash" character(64) NOT NULL, "prefix" character varying(10) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_api_keys_hash" UNIQUE ("key_hash"), CONSTRAINT "ck_api_keys_scopes" CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['admin', 'read', 'client']::text[]), CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_api_keys_org_created" ON "identity"."api_keys" ("org_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "identity"."api_keys" ADD CONSTRAINT "fk_api_keys_org" FOREIGN KEY ("org_id") REFERENCES "identity"."organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."api_keys" DROP CONSTRAINT "fk_api_keys_org"`);
    await queryRunner.query(`DROP INDEX "identity"."ix_api_keys_org_created"`);
    await queryRunner.query(`DROP TABLE "identity"."api_keys"`);
    await queryRunner.query(`DROP TABLE "identity"."organizations"`);
  }
}
