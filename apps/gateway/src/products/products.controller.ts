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
import { Direct } from '../http/direct-routes';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../identity/scopes';

@ApiTags('products')
@Controller(routes('products'))
export class ProductsController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent()
  @Answers(Messages.product.create, { status: 201 })
  @ApiProblems(404, 409)
  create(@Body() dto: CreateProductDto): Promise<ProductView> {
    return this.bus.send(Messages.product.create, dto);
  }

  @Get()
  @AllowScopes('read')
  @Answers(Messages.product.list)
  @ApiProblems()
  list(@Query() query: PageQueryDto): Promise<ProductListView> {
    return this.bus.send(Messages.product.list, query);
  }

  @Get(':id')
  @AllowScopes('read')
  @Answers(Messages.product.get)
  @ApiProblems(404)
  @Direct()
  get(@Param('id', uuidParam) id: string): Promise<ProductView> {
    return this.bus.send(Messages.product.get, { id });
  }

  @Put(':id')
  @Answers(Messages.product.update)
  @ApiProblems(404)
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateProductDto): Promise<ProductView> {
    return this.bus.send(Messages.product.update, { id, changes });
  }

  @Delete(':id')
  @HttpCode(200)
  @Answers(Messages.product.delete)
  @ApiProblems(404, 409)
  delete(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.product.delete, { id });
  }

  @Get(':id/public-key')
  @AllowScopes('read', 'client')
  @Answers(Messages.catalog.publicKey)
  @ApiProblems(404, 422)
  @Direct()
  publicKey(@Param('id', uuidParam) id: string): Promise<ProductPublicKeyView> {
    return this.bus.send(Messages.catalog.publicKey, { id });
  }
}
