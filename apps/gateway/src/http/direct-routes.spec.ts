import { Body, Param, Post } from '@nestjs/common';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { IdDto } from '@licensing/contracts';
import { Direct } from './direct-routes';

describe('@Direct()', () => {
  it('records the controller, the method and the class its body is validated with', () => {
    class Controller {
      @Post()
      @Direct()
      check(@Body() dto: IdDto): IdDto {
        return dto;
      }
    }
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Controller.prototype.check)).toEqual({
      direct: { controller: Controller, method: 'check', body: IdDto },
    });
  });

  it('refuses, when the class loads, a method that takes anything but its body', () => {
    expect(() => {
      class Controller {
        @Post(':id')
        @Direct()
        check(@Param('id') id: string, @Body() dto: IdDto): string {
          return id + String(dto);
        }
      }
      return Controller;
    }).toThrow('@Direct() Controller.check must take exactly its @Body()');
  });
});
