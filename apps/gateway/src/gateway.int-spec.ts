import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NatsConnection, connect } from 'nats';
import { DataSource } from 'typeorm';
import {
  AUDIT_ENTRIES_PER_MESSAGE,
  AuditEntryRecord,
  Streams,
  auditSubject,
  deadLetterSubject,
} from '@licensing/contracts';
import { pendingSchemaChanges } from '@licensing/shared/database';
import { DeadLetterHeaders, ensureStream, namespaced } from '@licensing/shared/messaging';
import {
  deleteNamespaceStreams,
  testEnv,
  uniqueNamespace,
  waitFor,
  TEST_NATS_URL,
} from '@licensing/shared/testing';
import { startGateway } from './edge/app';
import { AUDIT_CONSUMER } from './audit/audit-entries.consumer';
import { loadGatewayConfig } from './config';

/**
 * The gateway alone on the real PostgreSQL and NATS: its schema, and how it stores the audit
 * entries the services publish on the AUDIT_EVENTS stream.
 */
describe('gateway', () => {
  const namespace = uniqueNamespace();
  const env = testEnv(namespace);
  const orgId = randomUUID();
  let app: INestApplication;
  let nats: NatsConnection;

  beforeAll(async () => {
    app = await startGateway(loadGatewayConfig(env));
    nats = await connect({ servers: TEST_NATS_URL });
    await ensureStream(nats, namespace, Streams.audit);
  });

  afterAll(async () => {
    await nats.close();
    await app.close();
    await deleteNamespaceStreams(namespace);
  });

  const entry = (overrides: Partial<AuditEntryRecord> = {}): AuditEntryRecord => ({
    id: randomUUID(),
    org_id: orgId,
    occurred_at: new Date().toISOString(),
    action: 'created',
    resource_type: 'product',
    resource_id: randomUUID(),
    actor: { api_key_id: randomUUID(), prefix: 'lk_abcdefg', name: 'ci' },
    request_id: randomUUID(),
    ip: '10.0.0.1',
    changes: { name: { from: null, to: 'Editor' } },
    ...overrides,
  });

  /** Publishes as a service's outbox relay would; `messageId` defaults to the entry id. */
  async function publish(payload: unknown, subjectOrg = orgId, messageId = randomUUID()): Promise<void> {
    const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
    await nats
      .jetstream()
      .publish(namespaced(namespace, auditSubject(subjectOrg)), new TextEncoder().encode(data), {
        msgID: messageId,
      });
  }

  const deadLetterStream = `${namespace}_${Streams.deadLetters.name}`;
  const lastDeadLetter = async (): Promise<number> => {
    const manager = await nats.jetstreamManager();
    return (await manager.streams.info(deadLetterStream).catch(() => undefined))?.state.last_seq ?? 0;
  };

  /** The first `count` messages the audit consumer set aside after the dead letter numbered `after`. */
  async function deadLettersAfter(
    after: number,
    count: number,
  ): Promise<Array<{ body: unknown; reason: string }>> {
    const manager = await nats.jetstreamManager();
    const subject = namespaced(namespace, deadLetterSubject(AUDIT_CONSUMER));
    return waitFor(
      async () => {
        const found: Array<{ body: unknown; reason: string }> = [];
        for (let seq = after + 1; seq <= (await lastDeadLetter()); seq++) {
          const letter = await manager.streams.getMessage(deadLetterStream, { seq });
          if (letter.subject !== subject) continue;
          found.push({ body: letter.json(), reason: letter.header.get(DeadLetterHeaders.reason) });
        }
        return found.length >= count && found.slice(0, count);
      },
      { what: `${count} dead letters` },
    );
  }

  const stored = async (id: string): Promise<number> =>
    Number(
      (
        await app.get(DataSource).query(`SELECT count(*) AS n FROM identity.audit_events WHERE id = $1`, [id])
      )[0].n,
    );

  it('leaves no difference between its entities and its migrations', async () => {
    expect(await pendingSchemaChanges(app.get(DataSource))).toEqual([]);
  });

  it('stores an entry delivered twice once', async () => {
    const twice = entry();
    await publish(twice);
    await publish(twice); // another message id: JetStream keeps both, the gateway must not
    const marker = entry();
    await publish(marker);
    await waitFor(async () => (await stored(marker.id)) === 1, { what: 'the marker entry' });
    expect(await stored(twice.id)).toBe(1);
  });

  it('drops malformed entries at once, and keeps storing the ones after them', async () => {
    const intruder = entry({ org_id: randomUUID() });
    const badAction = entry({ action: 'exploded' as never });
    const noActor = { ...entry(), actor: undefined };
    await publish('not json');
    await publish('[1, 2]');
    await publish(badAction);
    await publish(noActor);
    await publish(intruder); // filed under another organization's subject
    const good = entry();
    await publish(good);
    await waitFor(async () => (await stored(good.id)) === 1, { what: 'the good entry' });
    for (const id of [intruder.id, badAction.id, noActor.id]) expect(await stored(id)).toBe(0);

    // Terminated, not waiting for redelivery: nothing is left pending on the durable consumer.
    const manager = await nats.jetstreamManager();
    const stream = `${namespace}_${Streams.audit.name}`;
    await waitFor(
      async () => {
        const info = await manager.consumers.info(stream, AUDIT_CONSUMER);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { what: 'an empty consumer' },
    );
  });

  it('sets aside an entry PostgreSQL refuses, and stores the others of its batch', async () => {
    const before = [entry(), entry()];
    const refused = entry({ request_id: 'nul\u0000here' }); // valid to the contract, not to PostgreSQL
    const after = [entry(), entry()];
    await Promise.all([...before, refused, ...after].map((each) => publish(each)));
    for (const { id } of [...before, ...after])
      await waitFor(async () => (await stored(id)) === 1, { what: `entry ${id}` });
    const manager = await nats.jetstreamManager();
    const setAside = await waitFor(
      () =>
        manager.streams
          .getMessage(`${namespace}_${Streams.deadLetters.name}`, {
            last_by_subj: namespaced(namespace, deadLetterSubject(AUDIT_CONSUMER)),
          })
          .catch(() => undefined),
      { what: 'the dead letter' },
    );
    expect((setAside.json() as AuditEntryRecord).id).toBe(refused.id);
    expect(await stored(refused.id)).toBe(0);
  });

  it('stores every entry of a message of several, as the outbox relay sends a batch', async () => {
    const several = [entry(), entry(), entry()];
    await publish(several);
    for (const { id } of several)
      await waitFor(async () => (await stored(id)) === 1, { what: `entry ${id}` });
  });

  it('refuses a message of several whole when one of its entries is malformed or of another organization', async () => {
    const spoiled = [entry(), entry({ action: 'exploded' as never })];
    const trespassing = [entry(), entry({ org_id: randomUUID() })];
    const nested = [entry(), [entry()]];
    const before = await lastDeadLetter();
    await publish(spoiled);
    await publish(trespassing);
    await publish(nested);
    await publish('[]');
    await publish(Array.from({ length: AUDIT_ENTRIES_PER_MESSAGE + 1 }, () => entry()));
    const marker = entry();
    await publish(marker);
    await waitFor(async () => (await stored(marker.id)) === 1, { what: 'the marker entry' });
    for (const { id } of [...spoiled, ...trespassing, nested[0] as AuditEntryRecord])
      expect(await stored(id)).toBe(0);
    const setAside = await deadLettersAfter(before, 5);
    expect(setAside.map(({ reason }) => reason)).toEqual([
      expect.stringMatching(/^malformed: entry 1: action must be one of/),
      'malformed: entry 1: org_id is not the organization of the subject',
      'malformed: entry 1: not an object',
      `malformed: an array of 1 to ${AUDIT_ENTRIES_PER_MESSAGE} entries expected`,
      `malformed: an array of 1 to ${AUDIT_ENTRIES_PER_MESSAGE} entries expected`,
    ]);
  });

  it('keeps the entries PostgreSQL accepts of a message of several, and sets the message aside', async () => {
    const good = [entry(), entry()];
    const refused = entry({ request_id: 'nul\u0000here' });
    const message = [good[0], refused, good[1]];
    const before = await lastDeadLetter();
    await publish(message);
    for (const { id } of good) await waitFor(async () => (await stored(id)) === 1, { what: `entry ${id}` });
    const [setAside] = await deadLettersAfter(before, 1);
    expect(setAside.body).toEqual(message);
    expect(setAside.reason).toMatch(/^refused by PostgreSQL: /);
    expect(await stored(refused.id)).toBe(0);
  });

  it('stores the entries published while it was stopped once it is back', async () => {
    await app.close();
    const meanwhile = entry();
    await publish(meanwhile);
    app = await startGateway(loadGatewayConfig(env));
    await waitFor(async () => (await stored(meanwhile.id)) === 1, { what: 'the entry published meanwhile' });
  });
});
