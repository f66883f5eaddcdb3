import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateActivations1795376901819 implements MigrationInterface {
  name = 'CreateActivations1795376901819';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."activations" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "license_id" uuid NOT NULL, "fingerprint" character varying(512) NOT NULL, "hostname" character varying(255), "platform" character varying(100), "components" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "last_heartbeat_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_activations_license_fingerprint" UNIQUE ("license_id", "fingerprint"), CONSTRAINT "PK_db9ffdd659f4ac699248030b596" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_activations_expires" ON "license"."activations" ("expires_at") `);
    await queryRunner.query(`CREATE INDEX "ix_activations_org_created" ON "license"."activations" ("org_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "license"."activations" ADD CONSTRAINT "fk_activations_license" FOREIGN KEY ("license_id") REFERENCES "license"."licenses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."activations" DROP CONSTRAINT "fk_activations_license"`);
    await queryRunner.query(`DROP INDEX "license"."ix_activations_org_created"`);
    await queryRunner.query(`DROP INDEX "license"."ix_activations_expires"`);
    await queryRunner.query(`DROP TABLE "license"."activations"`);
  }
}
