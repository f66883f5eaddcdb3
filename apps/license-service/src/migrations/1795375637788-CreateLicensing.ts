import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateLicensing1795375637788 implements MigrationInterface {
  name = 'CreateLicensing1795375637788';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "license"."key_pairs" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "name" character varying(255) NOT NULL, "algorithm" character varying(20) NOT NULL, "public_key" text NOT NULL, "fingerprint" character(64) NOT NULL, "private_key_ciphertext" bytea NOT NULL, "master_key_version" character varying(64) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "ck_key_pairs_algorithm" CHECK (algorithm IN ('ed25519', 'ecdsa-p256', 'rsa-3072')), CONSTRAINT "PK_e099316570a88264270d75ed0dc" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_key_pairs_org_created" ON "license"."key_pairs" ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE TABLE "license"."catalog_products" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "code" character varying(100) NOT NULL, "name" character varying(255) NOT NULL, "key_pair_id" uuid, "default_features" text array NOT NULL, "default_valid_days" integer NOT NULL, "max_concurrent_activations" integer, "activation_heartbeat_interval" integer, "retired_at" TIMESTAMP(3) WITH TIME ZONE, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_9f7a978657257a0bb575a174f0a" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_catalog_products_key_pair" ON "license"."catalog_products" ("key_pair_id") `);
    await queryRunner.query(`CREATE TABLE "license"."licenses" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "product_id" uuid NOT NULL, "serial" character varying(160) NOT NULL, "license_type" character varying(20) NOT NULL, "customer_id" character varying(255), "customer_email" character varying(320), "status" character varying(20) NOT NULL, "valid_from" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "valid_until" TIMESTAMP(3) WITH TIME ZONE, "features" text array NOT NULL, "max_seats" integer NOT NULL, "hardware_binding" jsonb, "key_pair_id" uuid NOT NULL, "jws" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "uq_licenses_serial" UNIQUE ("serial"), CONSTRAINT "ck_licenses_seats" CHECK (max_seats > 0), CONSTRAINT "ck_licenses_validity" CHECK (valid_until IS NULL OR valid_until >= valid_from), CONSTRAINT "ck_licenses_revoked_at" CHECK ((status = 'revoked') = (revoked_at IS NOT NULL)), CONSTRAINT "ck_licenses_type" CHECK (license_type IN ('perpetual', 'subscription', 'trial', 'node_locked', 'floating')), CONSTRAINT "ck_licenses_status" CHECK (status IN ('active', 'revoked', 'expired', 'suspended')), CONSTRAINT "PK_da5021501ce80efa03de6f40086" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_licenses_key_pair" ON "license"."licenses" ("key_pair_id") `);
    await queryRunner.query(`CREATE INDEX "ix_licenses_product" ON "license"."licenses" ("product_id") `);
    await queryRunner.query(`CREATE INDEX "ix_licenses_org_created" ON "license"."licenses" ("org_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "license"."catalog_products" ADD CONSTRAINT "fk_catalog_products_key_pair" FOREIGN KEY ("key_pair_id") REFERENCES "license"."key_pairs"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "license"."licenses" ADD CONSTRAINT "fk_licenses_product" FOREIGN KEY ("product_id") REFERENCES "license"."catalog_products"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."licenses" DROP CONSTRAINT "fk_licenses_product"`);
    await queryRunner.query(`ALTER TABLE "license"."catalog_products" DROP CONSTRAINT "fk_catalog_products_key_pair"`);
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_org_created"`);
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_product"`);
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_key_pair"`);
    await queryRunner.query(`DROP TABLE "license"."licenses"`);
    await queryRunner.query(`DROP INDEX "license"."ix_catalog_products_key_pair"`);
    await queryRunner.query(`DROP TABLE "license"."catalog_products"`);
    await queryRunner.query(`DROP INDEX "license"."ix_key_pairs_org_created"`);
    await queryRunner.query(`DROP TABLE "license"."key_pairs"`);
  }
}
