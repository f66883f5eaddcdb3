import { Body, Get, Param, Post, Query, Res } from '@nestjs/common';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { IdDto } from '@licensing/contracts';
import { Direct } from './direct';

describe('@Direct()', () => {
  it('records the controller, the method and where each parameter comes from', () => {
    class Controller {
      @Post()
      @Direct()
      check(@Body() dto: IdDto): IdDto {
        return dto;
      }
    }
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Controller.prototype.check)).toEqual({
      direct: {
        controller: Controller,
        method: 'check',
        params: [{ index: 0, from: 'body', pipes: [], metatype: IdDto }],
      },
    });
  });

  it('reads a path parameter through its own pipes', () => {
    const pipe = { transform: (value: string) => value };
    class Controller {
      @Get(':id')
      @Direct()
      get(@Param('id', pipe) id: string): string {
        return id;
      }
    }
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Controller.prototype.get)).toMatchObject({
      direct: { params: [{ index: 0, from: 'param', name: 'id', pipes: [pipe], metatype: String }] },
    });
  });

  it('refuses, when the class loads, a method that takes anything but its body and path parameters', () => {
    expect(() => {
      class Controller {
        @Get()
        @Direct()
        list(@Query() query: IdDto): IdDto {
          return query;
        }
      }
      return Controller;
    }).toThrow(
      '@Direct() Controller.list may take only its @Body(), @Param(name)s and @Res({ passthrough: true })',
    );
  });

  it('passes the reply to a method that takes it passed through, and refuses one that answers by itself', () => {
    class Controller {
      @Post()
      @Direct()
      create(@Body() dto: IdDto, @Res({ passthrough: true }) _reply: unknown): IdDto {
        return dto;
      }
    }
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Controller.prototype.create)).toMatchObject({
      direct: {
        params: expect.arrayContaining([{ index: 1, from: 'reply', pipes: [], metatype: undefined }]),
      },
    });
    expect(() => {
      class Answering {
        @Post()
        @Direct()
        create(@Res() _reply: unknown): void {}
      }
      return Answering;
    }).toThrow('@Direct() Answering.create may take only');
  });
});
