import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Policies, the processes of an activation's machine, and on licenses: the policy they follow, the
 * limits they set themselves, and their last check-in. Expand only: the previous release neither
 * reads nor writes the new columns, whose defaults fit its inserts.
 */
export class AddPolicies1799200000000 implements MigrationInterface {
  name = 'AddPolicies1799200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."policies" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "name" character varying(255) NOT NULL, "license_type" character varying(20) NOT NULL, "duration_days" integer, "max_machines" integer NOT NULL, "max_processes" integer, "heartbeat_interval_seconds" integer, "heartbeat_grace_seconds" integer NOT NULL DEFAULT '0', "check_in_interval_days" integer, "overage" character varying(10) NOT NULL DEFAULT 'none', "machine_matching" character varying(10) NOT NULL DEFAULT 'all', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "ck_policies_perpetual" CHECK (license_type <> 'perpetual' OR duration_days IS NULL), CONSTRAINT "ck_policies_machines" CHECK (max_machines > 0), CONSTRAINT "ck_policies_machine_matching" CHECK (machine_matching IN ('any', 'two', 'most', 'all')), CONSTRAINT "ck_policies_overage" CHECK (overage IN ('none', '1.25x', '1.5x', '2x', 'always')), CONSTRAINT "ck_policies_type" CHECK (license_type IN ('perpetual', 'subscription', 'trial', 'node_locked', 'floating')), CONSTRAINT "PK_603e09f183df0108d8695c57e28" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_policies_product" ON "license"."policies" ("product_id") `);
    await queryRunner.query(`CREATE INDEX "ix_policies_org_created" ON "license"."policies" ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE TABLE "license"."processes" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "activation_id" uuid NOT NULL, "pid" bigint NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "last_heartbeat_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_processes_activation_pid" UNIQUE ("activation_id", "pid"), CONSTRAINT "PK_566885de50f7d20a6df306c12e6" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_processes_expires" ON "license"."processes" ("expires_at") `);
    await queryRunner.query(`CREATE INDEX "ix_processes_activation_created" ON "license"."processes" ("activation_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "policy_id" uuid`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "overridden" text array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD "last_check_in_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`CREATE INDEX "ix_licenses_policy" ON "license"."licenses" ("policy_id") `);
    await queryRunner.query(`ALTER TABLE "license"."policies" ADD CONSTRAINT "fk_policies_product" FOREIGN KEY ("product_id") REFERENCES "license"."catalog_products"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD CONSTRAINT "fk_licenses_policy" FOREIGN KEY ("policy_id") REFERENCES "license"."policies"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."processes" ADD CONSTRAINT "fk_processes_activation" FOREIGN KEY ("activation_id") REFERENCES "license"."activations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."processes" DROP CONSTRAINT "fk_processes_activation"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP CONSTRAINT "fk_licenses_policy"`);
    await queryRunner.query(`ALTER TABLE "license"."policies" DROP CONSTRAINT "fk_policies_product"`);
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_policy"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "last_check_in_at"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "overridden"`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP COLUMN "policy_id"`);
    await queryRunner.query(`DROP INDEX "license"."ix_processes_activation_created"`);
    await queryRunner.query(`DROP INDEX "license"."ix_processes_expires"`);
    await queryRunner.query(`DROP TABLE "license"."processes"`);
    await queryRunner.query(`DROP INDEX "license"."ix_policies_org_created"`);
    await queryRunner.query(`DROP INDEX "license"."ix_policies_product"`);
    await queryRunner.query(`DROP TABLE "license"."policies"`);
  }
}
