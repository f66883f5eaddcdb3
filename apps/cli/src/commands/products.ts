import type { Command } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addGet, addList, addRemove, apiCommand, commandGroup, compact, pick, segment } from '../command-kit';
import { csv, integer } from '../option-parsers';
import { print, table } from '../output';

const PRODUCT_COLUMNS = ['id', 'code', 'name', 'key_pair_id', 'default_valid_days'];

/** `products`: what licenses are for. */
export function registerProductCommands(program: Command, io: CliIo): void {
  const products = commandGroup(program, io, 'products', 'Products');
  apiCommand(io, products.command('create').description('Create a product'))
    .requiredOption('--name <name>', 'its name')
    .requiredOption('--code <code>', 'its code (lowercase, dashes)')
    .option('--key-pair-id <id>', 'the key pair that signs its licenses')
    .option('--description <text>', 'a description')
    .option('--default-valid-days <days>', 'validity of new licenses (0: perpetual)', integer)
    .option('--default-features <features>', 'comma-separated features of new licenses', csv)
    .action(async (o: ApiOptions & Record<string, unknown>) => {
      const body = await callApi(io, o, 'POST', '/v1/products', productBody(o, true));
      print(io, o, body, () => table([pick(body, PRODUCT_COLUMNS)]));
    });
  addList(io, products, 'products', 'products', '/v1/products', PRODUCT_COLUMNS);
  addGet(io, products, 'a product', '/v1/products', PRODUCT_COLUMNS);
  apiCommand(io, products.command('update').description('Change a product (its code stays)').argument('<id>'))
    .option('--name <name>', 'its name')
    .option('--key-pair-id <id>', 'the key pair that signs its licenses')
    .option('--description <text>', 'a description')
    .option('--default-valid-days <days>', 'validity of new licenses (0: perpetual)', integer)
    .option('--default-features <features>', 'comma-separated features of new licenses', csv)
    .action(async (id: string, o: ApiOptions & Record<string, unknown>) => {
      const body = await callApi(io, o, 'PUT', `/v1/products/${segment(id)}`, productBody(o, false));
      print(io, o, body, () => table([pick(body, PRODUCT_COLUMNS)]));
    });
  addRemove(io, products, 'delete', 'Delete a product', '/v1/products');
}

/** The body of `create`, or of `update`, which cannot change the code. */
function productBody(o: Record<string, unknown>, create: boolean): Record<string, unknown> {
  return compact({
    name: o['name'],
    ...(create ? { code: o['code'] } : {}),
    key_pair_id: o['keyPairId'],
    description: o['description'],
    default_valid_days: o['defaultValidDays'],
    default_features: o['defaultFeatures'],
  });
}
