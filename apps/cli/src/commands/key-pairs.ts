import { Command, Option } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import { addList, apiCommand, commandGroup, compact, pick } from '../command-kit';
import { print, table } from '../output';

/** `key-pairs`: the keys that sign licenses. */
export function registerKeyPairCommands(program: Command, io: CliIo): void {
  const keyPairs = commandGroup(program, io, 'key-pairs', 'Signing key pairs');
  apiCommand(io, keyPairs.command('create').description('Generate a key pair'))
    .option('--name <name>', 'a name')
    .addOption(
      new Option('--algorithm <algorithm>', 'the key type').choices(['ed25519', 'ecdsa-p256', 'rsa-3072']),
    )
    .action(async (o: ApiOptions & { name?: string; algorithm?: string }) => {
      const body = await callApi(
        io,
        o,
        'POST',
        '/v1/key-pairs',
        compact({ name: o.name, algorithm: o.algorithm }),
      );
      print(io, o, body, () => table([pick(body, ['id', 'name', 'algorithm', 'fingerprint'])]));
    });
  addList(io, keyPairs, 'key pairs', 'key_pairs', '/v1/key-pairs', ['id', 'name', 'algorithm', 'created_at']);
}
