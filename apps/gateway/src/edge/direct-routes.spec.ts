import {
  Body,
  CallHandler,
  CanActivate,
  Controller,
  ExecutionContext,
  Header,
  Injectable,
  NestInterceptor,
  Post,
  Redirect,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import { IdDto } from '@licensing/contracts';
import { Direct } from '../http/direct';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { SignedAnswer } from '../signed-answers/answer-signing';
import { ProblemFilter } from './problem.filter';
import { skippedByDirect } from './direct-routes';

@Injectable()
class AnyGuard implements CanActivate {
  canActivate(_context: ExecutionContext): boolean {
    return true;
  }
}

@Injectable()
class AnyInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

const pipe = { transform: (value: unknown) => value };

describe('skippedByDirect', () => {
  it('finds nothing on a route the direct preHandler serves whole', () => {
    @Controller()
    class Routes {
      @Post('a')
      @Direct()
      plain(@Body() dto: IdDto): IdDto {
        return dto;
      }

      @Post('b')
      @Direct()
      @Idempotent()
      @SignedAnswer()
      honoured(@Body() dto: IdDto): IdDto {
        return dto;
      }
    }
    expect(skippedByDirect(Routes, 'plain')).toEqual([]);
    expect(skippedByDirect(Routes, 'honoured')).toEqual([]);
  });

  it('names every guard, pipe, filter, header, redirect and interceptor it would skip', () => {
    @Controller()
    @UseGuards(AnyGuard)
    class Guarded {
      @Post()
      @Direct()
      check(@Body() dto: IdDto): IdDto {
        return dto;
      }
    }
    @Controller()
    class Declaring {
      @Post('pipes')
      @Direct()
      @UsePipes(pipe)
      piped(@Body() dto: IdDto): IdDto {
        return dto;
      }

      @Post('filters')
      @Direct()
      @UseFilters(ProblemFilter)
      filtered(@Body() dto: IdDto): IdDto {
        return dto;
      }

      @Post('headers')
      @Direct()
      @Header('Cache-Control', 'no-store')
      headed(@Body() dto: IdDto): IdDto {
        return dto;
      }

      @Post('redirect')
      @Direct()
      @Redirect('https://example.com')
      redirected(@Body() dto: IdDto): IdDto {
        return dto;
      }

      @Post('interceptor')
      @Direct()
      @UseInterceptors(AnyInterceptor)
      intercepted(@Body() dto: IdDto): IdDto {
        return dto;
      }
    }
    expect(skippedByDirect(Guarded, 'check')).toEqual(['a guard']);
    expect(skippedByDirect(Declaring, 'piped')).toEqual(['a method pipe']);
    expect(skippedByDirect(Declaring, 'filtered')).toEqual(['an exception filter']);
    expect(skippedByDirect(Declaring, 'headed')).toEqual(['a @Header()']);
    expect(skippedByDirect(Declaring, 'redirected')).toEqual(['a @Redirect()']);
    expect(skippedByDirect(Declaring, 'intercepted')).toEqual(['the interceptor AnyInterceptor']);
  });
});
