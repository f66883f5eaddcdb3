import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateProductDto,
  MessageView,
  PageQueryDto,
  ProductListView,
  ProductPublicKeyView,
  ProductView,
  Messages,
  UpdateProductDto,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Direct } from '../http/direct';
import { Answers } from '../http/answers';
import { Operation } from '../http/operation';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes, ReachOf } from '../http/route-access';

@ApiTags('products')
@Controller(routes('products'))
export class ProductsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Operation({
    id: 'createProduct',
    summary: 'Create a product',
    description:
      'Creates a product of the organization. `code` (lowercase letters, digits and single hyphens) is ' +
      "unique in the organization, part of every license's serial (`LIC-PHOTO-EDITOR-…`), and never " +
      'changes. Licenses can be issued once the product has a key pair (`key_pair_id`); ' +
      '`default_valid_days` and `default_features` are what a new license gets unless it says otherwise. ' +
      'Publishes `product.created`.',
    example: {
      name: 'Photo Editor',
      code: 'photo-editor',
      key_pair_id: '3f1c2a9e-8b7d-4c6e-9a51-2d0f7e4b6c13',
      default_valid_days: 365,
      default_features: ['pro'],
    },
  })
  @Idempotent()
  @Answers(Messages.product.create, { status: 201 })
  @ApiProblems(
    ['not_found', 'the key pair `key_pair_id` does not exist in the organization'],
    ['conflict', 'the organization already has a product with this `code`'],
  )
  create(@Body() dto: CreateProductDto): Promise<ProductView> {
    return this.bus.send(Messages.product.create, dto);
  }

  @Get()
  @Operation({
    id: 'listProducts',
    summary: 'List products',
    description: "The organization's products, newest first, a page at a time.",
  })
  @AllowScopes('read')
  @Answers(Messages.product.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<ProductListView> {
    return this.bus.send(Messages.product.list, query);
  }

  @Get(':id')
  @Operation({ id: 'getProduct', summary: 'Get a product', description: 'One product of the organization.' })
  @AllowScopes('read')
  @Answers(Messages.product.get)
  @ApiProblems(['not_found', 'the product does not exist in the organization'])
  @Direct()
  get(@Param('id', uuidParam) id: string): Promise<ProductView> {
    return this.bus.send(Messages.product.get, { id });
  }

  @Put(':id')
  @Operation({
    id: 'updateProduct',
    summary: 'Update a product',
    description:
      'Changes the fields the body holds; the others keep their value. `code` cannot change (a `400`, ' +
      'even when unchanged). A new `key_pair_id` signs the licenses issued or changed from now on; ' +
      'licenses signed before stay verifiable with their own key pair. Publishes `product.updated`.',
    example: {
      name: 'Photo Editor Pro',
      default_features: ['pro', 'raw'],
      activation_heartbeat_interval: 3600,
    },
  })
  @Answers(Messages.product.update)
  @ApiProblems([
    'not_found',
    'the product, or the key pair `key_pair_id`, does not exist in the organization',
  ])
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateProductDto): Promise<ProductView> {
    return this.bus.send(Messages.product.update, { id, changes });
  }

  @Delete(':id')
  @Operation({
    id: 'deleteProduct',
    summary: 'Delete a product',
    description:
      'Deletes a product that has never had a license. A product with licenses, even only revoked ' +
      'ones, stays. Publishes `product.deleted`.',
  })
  @HttpCode(200)
  @Answers(Messages.product.delete)
  @ApiProblems(
    ['not_found', 'the product does not exist in the organization'],
    ['conflict', 'the product has licenses (revoked ones included)'],
  )
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.product.delete, { id });
  }

  @Get(':id/public-key')
  @Operation({
    id: 'getProductPublicKey',
    summary: "Get a product's public key",
    description:
      "The PEM public key of the product's key pair, which verifies its license files offline, with " +
      "the algorithm and the key pair id (a license header's `kid`). Ship it with the application.",
  })
  @AllowScopes('read', 'client', 'license')
  @ReachOf('product')
  @Answers(Messages.catalog.publicKey)
  @ApiProblems(
    ['not_found', 'the product does not exist in the organization'],
    ['key_pair_missing', 'the product has no key pair'],
  )
  @Direct()
  publicKey(@Param('id', uuidParam) id: string): Promise<ProductPublicKeyView> {
    return this.bus.send(Messages.catalog.publicKey, { id });
  }
}
