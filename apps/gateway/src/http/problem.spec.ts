import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotFoundException,
  ServiceUnavailableException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { DomainError, ERROR_STATUS, ErrorCode } from '@licensing/shared/errors';
import { toProblem } from './problem';

/** The reason phrase of every status an error code travels with (RFC 9110). */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** A Fastify error as its content-type parser throws it: a status code and an FST_ code. */
const fastifyError = (statusCode: number, code: string) =>
  Object.assign(new Error(code), { statusCode, code });

describe('toProblem', () => {
  describe('every error code', () => {
    it.each(Object.entries(ERROR_STATUS) as Array<[ErrorCode, number]>)(
      '%s is answered with status %i and its reason phrase as title',
      (code, status) => {
        const { problem, unexpected } = toProblem(new DomainError(code, `something about ${code}`));
        expect(problem).toEqual({
          type: 'about:blank',
          title: TITLES[status],
          status,
          code,
          detail: `something about ${code}`,
        });
        expect(unexpected).toBe(false);
      },
    );
  });

  it('keeps the field errors of a validation failure', () => {
    const errors = [{ field: 'max_seats', message: 'max_seats must be a positive integer' }];
    expect(toProblem(DomainError.validation(errors)).problem).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors,
    });
  });

  it('leaves errors out when there are none', () => {
    expect(toProblem(DomainError.notFound('License', 'x')).problem).not.toHaveProperty('errors');
  });

  it('answers an error that crossed the bus as JSON like the DomainError it was', () => {
    const { problem, unexpected } = toProblem({
      code: 'seat_limit_reached',
      status: 409,
      message: 'License l has all 3 seats in use',
    });
    expect(problem).toEqual({
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      code: 'seat_limit_reached',
      detail: 'License l has all 3 seats in use',
    });
    expect(unexpected).toBe(false);
  });

  it('takes the status from the code, never from what a peer claims', () => {
    expect(toProblem({ code: 'not_found', status: 500, message: 'gone' }).problem.status).toBe(404);
  });

  describe('errors of Nest and Fastify themselves', () => {
    it.each([
      ['an unknown route (Nest)', new NotFoundException(), 404, 'not_found', 'No such route'],
      [
        'a readiness probe that is not ready',
        new ServiceUnavailableException('NATS unavailable'),
        503,
        'unavailable',
        'NATS unavailable',
      ],
      [
        'an unknown route (Fastify)',
        fastifyError(404, 'FST_ERR_NOT_FOUND'),
        404,
        'not_found',
        'No such route',
      ],
      [
        'a method the route does not serve',
        new MethodNotAllowedException(),
        404,
        'not_found',
        'No such route for this method',
      ],
      [
        'a body over the limit (Nest)',
        new PayloadTooLargeException(),
        413,
        'payload_too_large',
        'The request body is larger than 1 MiB',
      ],
      [
        'a body over the limit (Fastify)',
        fastifyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE'),
        413,
        'payload_too_large',
        'The request body is larger than 1 MiB',
      ],
      [
        'a body that is not JSON (Nest)',
        new UnsupportedMediaTypeException(),
        400,
        'validation_failed',
        'The request body must be JSON (Content-Type: application/json)',
      ],
      [
        'a body that is not JSON (Fastify)',
        fastifyError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE'),
        400,
        'validation_failed',
        'The request body must be JSON (Content-Type: application/json)',
      ],
      [
        'an empty JSON body',
        fastifyError(400, 'FST_ERR_CTP_EMPTY_JSON_BODY'),
        400,
        'validation_failed',
        'The request body is empty',
      ],
      [
        'malformed JSON',
        fastifyError(400, 'FST_ERR_CTP_INVALID_JSON_BODY'),
        400,
        'validation_failed',
        'The request is malformed (invalid JSON?)',
      ],
      [
        'any other client error of Nest',
        new BadRequestException('whatever Nest said'),
        400,
        'validation_failed',
        'The request is malformed (invalid JSON?)',
      ],
      [
        'a 4xx of a status with no code of its own',
        new HttpException('teapot', 418),
        400,
        'validation_failed',
        'The request is malformed (invalid JSON?)',
      ],
    ])('%s', (_what, error, status, code, detail) => {
      const { problem, unexpected } = toProblem(error);
      expect(problem).toEqual({ type: 'about:blank', title: TITLES[status], status, code, detail });
      expect(unexpected).toBe(false);
    });
  });

  describe('anything else', () => {
    it.each([
      ['an Error', new Error('connection string postgres://secret@db failed')],
      ['a Nest 500', new InternalServerErrorException('stack and all')],
      ['a 5xx from Fastify', fastifyError(502, 'FST_SOMETHING')],
      ['a thrown string', 'boom'],
      ['undefined', undefined],
      ['an object with an unknown code', { code: 'no_such_code', message: 'x' }],
    ])('%s is a bare 500 internal, flagged unexpected, telling nothing of the cause', (_what, error) => {
      const { problem, unexpected } = toProblem(error);
      expect(problem).toEqual({
        type: 'about:blank',
        title: 'Internal Server Error',
        status: 500,
        code: 'internal',
        detail: 'An unexpected error occurred',
      });
      expect(unexpected).toBe(true);
    });
  });
});
