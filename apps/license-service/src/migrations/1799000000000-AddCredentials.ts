import { MigrationInterface, QueryRunner } from 'typeorm';

/** License tokens, machine tokens (a hash on the activation) and the grants the activation cap counts. */
export class AddCredentials1799000000000 implements MigrationInterface {
  name = 'AddCredentials1799000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."activation_grants" ("id" uuid NOT NULL, "license_id" uuid NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_6c4d588388bb6f2fac3832d4e54" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_activation_grants_created" ON "license"."activation_grants" ("created_at") `);
    await queryRunner.query(`CREATE INDEX "ix_activation_grants_license_created" ON "license"."activation_grants" ("license_id", "created_at") `);
    await queryRunner.query(`CREATE TABLE "license"."license_tokens" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "name" character varying(255), "token_hash" character(64) NOT NULL, "prefix" character varying(10) NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_license_tokens_hash" UNIQUE ("token_hash"), CONSTRAINT "PK_72bbb4712ae719b4d567c3dafcb" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_license_tokens_license_created" ON "license"."license_tokens" ("license_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "license"."activations" ADD "token_hash" character(64)`);
    await queryRunner.query(`ALTER TABLE "license"."activations" ADD CONSTRAINT "UQ_9628127c78b8f3cbdd46308e503" UNIQUE ("token_hash")`);
    await queryRunner.query(`ALTER TABLE "license"."activation_grants" ADD CONSTRAINT "fk_activation_grants_license" FOREIGN KEY ("license_id") REFERENCES "license"."licenses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."license_tokens" ADD CONSTRAINT "fk_license_tokens_license" FOREIGN KEY ("license_id") REFERENCES "license"."licenses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."license_tokens" DROP CONSTRAINT "fk_license_tokens_license"`);
    await queryRunner.query(`ALTER TABLE "license"."activation_grants" DROP CONSTRAINT "fk_activation_grants_license"`);
    await queryRunner.query(`ALTER TABLE "license"."activations" DROP CONSTRAINT "UQ_9628127c78b8f3cbdd46308e503"`);
    await queryRunner.query(`ALTER TABLE "license"."activations" DROP COLUMN "token_hash"`);
    await queryRunner.query(`DROP TABLE "license"."license_tokens"`);
    await queryRunner.query(`DROP TABLE "license"."activation_grants"`);
  }
}
