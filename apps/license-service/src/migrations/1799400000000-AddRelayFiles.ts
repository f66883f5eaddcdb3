import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Relay files: one row per file issued to a relay (its site and public key, the file's lifetime).
 * Expand only: a new table that the previous release neither reads nor writes.
 */
export class AddRelayFiles1799400000000 implements MigrationInterface {
  name = 'AddRelayFiles1799400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."relay_files" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "product_id" uuid NOT NULL, "site" character varying(200) NOT NULL, "public_key" text NOT NULL, "issued_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "pk_relay_files" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_relay_files_org_created" ON "license"."relay_files" ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE INDEX "ix_relay_files_license_created" ON "license"."relay_files" ("license_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "license"."relay_files" ADD CONSTRAINT "fk_relay_files_license" FOREIGN KEY ("license_id") REFERENCES "license"."licenses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."relay_files" DROP CONSTRAINT "fk_relay_files_license"`);
    await queryRunner.query(`DROP INDEX "license"."ix_relay_files_license_created"`);
    await queryRunner.query(`DROP INDEX "license"."ix_relay_files_org_created"`);
    await queryRunner.query(`DROP TABLE "license"."relay_files"`);
  }
}
