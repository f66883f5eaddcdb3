import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateKeyPairDto,
  KeyPairListView,
  KeyPairView,
  MessageView,
  PageQueryDto,
  Messages,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Answers } from '../http/answers';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../http/route-access';

@ApiTags('key-pairs')
@Controller(routes('key-pairs'))
export class KeyPairsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Operation({
    id: 'createKeyPair',
    summary: 'Generate a key pair',
    description:
      'Generates a signing key pair: `ed25519` (the default), `ecdsa-p256` or `rsa-3072`. The private ' +
      'key is kept encrypted by the license service and never leaves it; the answer holds the public ' +
      'key and its fingerprint (SHA-256 of the DER public key, lowercase hex). Publishes `key_pair.created`.',
    example: { name: 'production', algorithm: 'ed25519' },
  })
  @Idempotent()
  @Answers(Messages.keyPair.create, {
    status: 201,
    description: 'The private key is generated and kept by the service',
  })
  @ApiProblems()
  create(@Body() dto: CreateKeyPairDto): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.create, dto);
  }

  @Get()
  @Operation({
    id: 'listKeyPairs',
    summary: 'List key pairs',
    description: "The organization's key pairs, newest first, a page at a time. Never a private key.",
  })
  @AllowScopes('read')
  @Answers(Messages.keyPair.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<KeyPairListView> {
    return this.bus.send(Messages.keyPair.list, query);
  }

  @Get(':id')
  @Operation({
    id: 'getKeyPair',
    summary: 'Get a key pair',
    description: 'One key pair: its public key, never its private key.',
  })
  @AllowScopes('read')
  @Answers(Messages.keyPair.get)
  @ApiProblems(['not_found', 'the key pair does not exist in the organization'])
  get(@Param('id', uuidParam) id: string): Promise<KeyPairView> {
    return this.bus.send(Messages.keyPair.get, { id });
  }

  @Delete(':id')
  @Operation({
    id: 'deleteKeyPair',
    summary: 'Delete a key pair',
    description:
      'Deletes a key pair for good. Refused while a product uses it or a license it signed is not ' +
      'revoked, so that no live license becomes unverifiable. Publishes `key_pair.deleted`.',
  })
  @HttpCode(200)
  @Answers(Messages.keyPair.delete)
  @ApiProblems(
    ['not_found', 'the key pair does not exist in the organization'],
    ['conflict', 'a product uses the key pair, or a license it signed is not revoked'],
  )
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.keyPair.delete, { id });
  }
}
