import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `ix_licenses_product (product_id)` repeated the leading column of `ix_licenses_product_list_version
 * (product_id, list_version)`, which serves every look-up by product (the product delete's foreign
 * key check included): one index fewer to write per license create.
 */
export class DropLicensesProductIndex1798000000000 implements MigrationInterface {
  name = 'DropLicensesProductIndex1798000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "license"."ix_licenses_product"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "ix_licenses_product" ON "license"."licenses" ("product_id") `);
  }
}
