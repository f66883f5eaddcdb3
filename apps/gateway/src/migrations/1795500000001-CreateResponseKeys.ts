import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateResponseKeys1795500000001 implements MigrationInterface {
  name = 'CreateResponseKeys1795500000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."response_keys" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "public_key" text NOT NULL, "private_key_ciphertext" bytea NOT NULL, "master_key_version" character varying(64) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_response_keys_org" UNIQUE ("org_id"), CONSTRAINT "pk_response_keys" PRIMARY KEY ("id"))`);
    await queryRunner.query(`ALTER TABLE "identity"."response_keys" ADD CONSTRAINT "fk_response_keys_org" FOREIGN KEY ("org_id") REFERENCES "identity"."organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."response_keys" DROP CONSTRAINT "fk_response_keys_org"`);
    await queryRunner.query(`DROP TABLE "identity"."response_keys"`);
  }
}
