import { defineMessage } from '@licensing/contracts';
import { CanActivate, Logger, Module, UseGuards } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { INestApplication } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Writable } from 'node:stream';
import { DomainError } from '@licensing/shared/errors';
import { createLogger, requestContext } from '@licensing/shared/logging';
import { BusClient, BusController, BusData, BusOrg, startBusService } from '@licensing/shared/messaging';
import { IsString } from 'class-validator';
import { TEST_NATS_URL, uniqueNamespace } from './environment';

class GreetDto {
  @IsString() name!: string;
}

@BusController()
class GreetingController {
  private readonly logger = new Logger('Greeting');

  @MessagePattern('test.greet.v1')
  greet(@BusOrg() orgId: string, @BusData() dto: GreetDto): { greeting: string } {
    this.logger.log({ msg: 'greeting', name: dto.name });
    if (dto.name === 'nobody') throw DomainError.notFound('Person', dto.name);
    if (dto.name === 'crash') throw new Error('secret detail of a bug');
    return { greeting: `hello ${dto.name} of ${orgId}` };
  }
}

@Module({ controllers: [GreetingController] })
class GreetingModule {}

class Deny implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

@BusController()
@UseGuards(Deny)
class GuardedController {
  @MessagePattern('test.guarded.v1')
  guarded(@BusData() dto: GreetDto): string {
    return dto.name;
  }
}

@Module({ controllers: [GuardedController] })
class GuardedModule {}

@Module({ controllers: [GreetingController], providers: [{ provide: APP_GUARD, useClass: Deny }] })
class GloballyGuardedModule {}

/**
 * A bus service built like ours (startBusService, @BusController), on the real NATS: every log
 * line a request causes carries its request id, organization and subject, and errors keep their
 * code across the bus.
 */
describe('request context across the bus', () => {
  const namespace = uniqueNamespace();
  const lines: Array<Record<string, unknown>> = [];
  let app: INestApplication;
  let client: BusClient;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    app = await startBusService(GreetingModule, {
      name: 'greeting-service',
      config: {
        NATS_URL: TEST_NATS_URL,
        BUS_NAMESPACE: namespace,
        HOST: '127.0.0.1',
        HEALTH_PORT: 0,
        SHUTDOWN_GRACE_MS: 50,
        LOG_LEVEL: 'info',
      },
      logger: createLogger('greeting-service', 'info', sink),
    });
    client = new BusClient({ natsUrl: TEST_NATS_URL, namespace, timeoutMs: 5_000, name: 'test' });
    await client.connect();
  });

  afterAll(async () => {
    await client.onApplicationShutdown();
    await app.close();
  });

  it("puts the caller's request id, organization and the subject on the service's log lines", async () => {
    const reply = await requestContext.run({ request_id: 'req-abc', org_id: 'org-1' }, () =>
      client.send(defineMessage('test.greet.v1'), { name: 'ada' }),
    );
    expect(reply).toEqual({ greeting: 'hello ada of org-1' });
    expect(lines).toContainEqual(
      expect.objectContaining({
        service: 'greeting-service',
        level: 'info',
        msg: 'greeting',
        name: 'ada',
        request_id: 'req-abc',
        org_id: 'org-1',
        subject: `${namespace}.test.greet.v1`,
      }),
    );
  });

  it('validates the payload with the DTO and answers typed errors', async () => {
    await expect(
      requestContext.run({ request_id: 'r', org_id: 'o' }, () =>
        client.send(defineMessage('test.greet.v1'), { name: 1 }),
      ),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      status: 400,
      errors: [expect.objectContaining({ field: 'name' })],
    });
    await expect(
      requestContext.run({ request_id: 'r', org_id: 'o' }, () =>
        client.send(defineMessage('test.greet.v1'), { name: 'nobody' }),
      ),
    ).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('answers an unexpected failure as internal, its details only in the log', async () => {
    const error = await requestContext
      .run({ request_id: 'req-crash', org_id: 'o' }, () =>
        client.send(defineMessage('test.greet.v1'), { name: 'crash' }),
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal', status: 500, message: 'Internal error' });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        request_id: 'req-crash',
        msg: expect.stringContaining('secret detail'),
      }),
    );
  });

  it('answers a request that names no organization as internal, never running the handler', async () => {
    await expect(
      requestContext.run({ request_id: 'r' }, () =>
        client.send(defineMessage('test.greet.v1'), { name: 'ada' }),
      ),
    ).rejects.toMatchObject({ code: 'internal', status: 500 });
  });

  it('refuses to boot a handler with a guard, which direct dispatch would never run', async () => {
    await expect(
      startBusService(GuardedModule, {
        name: 'guarded-service',
        config: {
          NATS_URL: TEST_NATS_URL,
          BUS_NAMESPACE: uniqueNamespace(),
          HOST: '127.0.0.1',
          HEALTH_PORT: 0,
          SHUTDOWN_GRACE_MS: 50,
          LOG_LEVEL: 'silent',
        },
      }),
    ).rejects.toThrow(
      'GuardedController.guarded: bus handlers are dispatched directly; Deny would never run',
    );
  });

  it('refuses to boot a service with a global guard, which direct dispatch would never run', async () => {
    await expect(
      startBusService(GloballyGuardedModule, {
        name: 'globally-guarded-service',
        config: {
          NATS_URL: TEST_NATS_URL,
          BUS_NAMESPACE: uniqueNamespace(),
          HOST: '127.0.0.1',
          HEALTH_PORT: 0,
          SHUTDOWN_GRACE_MS: 50,
          LOG_LEVEL: 'silent',
        },
      }),
    ).rejects.toThrow('global guards, pipes, interceptors and filters would never run');
  });
});
