import { MigrationInterface, QueryRunner } from 'typeorm';

export class MarkDeletions1795440938958 implements MigrationInterface {
  name = 'MarkDeletions1795440938958';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "product"."products" ADD "deleting_since" TIMESTAMP(3) WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "product"."products" DROP COLUMN "deleting_since"`);
  }
}
