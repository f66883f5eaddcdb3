import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddOfflineActivations1795400000000 implements MigrationInterface {
  name = 'AddOfflineActivations1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."activations" ADD "machine_key" character varying(64)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "license"."activations" DROP COLUMN "machine_key"`);
  }
}
