import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateProducts1795375480711 implements MigrationInterface {
  name = 'CreateProducts1795375480711';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "product"."products" ("id" uuid NOT NULL, "org_id" uuid NOT NULL, "name" character varying(255) NOT NULL, "code" character varying(100) NOT NULL, "description" text NOT NULL DEFAULT '', "default_features" text array NOT NULL DEFAULT '{}', "default_valid_days" integer NOT NULL DEFAULT '365', "key_pair_id" uuid, "max_concurrent_activations" integer, "activation_heartbeat_interval" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "uq_products_org_code" UNIQUE ("org_id", "code"), CONSTRAINT "ck_products_heartbeat" CHECK (activation_heartbeat_interval IS NULL OR activation_heartbeat_interval > 0), CONSTRAINT "ck_products_max_concurrent" CHECK (max_concurrent_activations IS NULL OR max_concurrent_activations > 0), CONSTRAINT "ck_products_valid_days" CHECK (default_valid_days >= 0), CONSTRAINT "ck_products_code" CHECK (code ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND char_length(code) <= 100), CONSTRAINT "PK_0806c755e0aca124e67c0cf6d7d" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "ix_products_org_created" ON "product"."products" ("org_id", "created_at", "id") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "product"."ix_products_org_created"`);
    await queryRunner.query(`DROP TABLE "product"."products"`);
  }
}
