import { randomUUID } from 'node:crypto';
import { auditSubject } from '@licensing/contracts';
import { OutboxRecord, outboxMessages } from './outbox-messages';

const orgA = randomUUID();
const orgB = randomUUID();

function event(org: string): OutboxRecord {
  const id = randomUUID();
  return {
    id,
    subject: `licensing.events.${org}.license.created`,
    payload: JSON.stringify({ id }),
    traceContext: null,
  };
}

function entry(org: string, size = 0): OutboxRecord {
  const id = randomUUID();
  return {
    id,
    subject: auditSubject(org),
    payload: JSON.stringify({ id, org_id: org, pad: 'x'.repeat(size) }),
    traceContext: `{"traceparent":"${id}"}`,
  };
}

const entriesOf = (payload: string): Array<{ id: string }> => {
  const parsed = JSON.parse(payload) as { id: string } | Array<{ id: string }>;
  return Array.isArray(parsed) ? parsed : [parsed];
};

describe('outboxMessages', () => {
  it('publishes every event alone and the audit entries of one organization together, in row order', () => {
    const rows = [event(orgA), entry(orgA), event(orgB), entry(orgB), entry(orgA), event(orgA), entry(orgB)];
    const messages = outboxMessages(rows);
    expect(messages.map((message) => message.subject)).toEqual([
      rows[0].subject,
      auditSubject(orgA),
      rows[2].subject,
      auditSubject(orgB),
      rows[5].subject,
    ]);
    const alone: Array<[number, OutboxRecord]> = [
      [0, rows[0]],
      [2, rows[2]],
      [4, rows[5]],
    ];
    for (const [index, row] of alone) {
      expect(messages[index]).toEqual({
        subject: row.subject,
        payload: row.payload,
        id: row.id,
        traceContext: null,
      });
    }
    expect(entriesOf(messages[1].payload).map(({ id }) => id)).toEqual([rows[1].id, rows[4].id]);
    expect(entriesOf(messages[3].payload).map(({ id }) => id)).toEqual([rows[3].id, rows[6].id]);
    // Published in the trace of the first entry's request.
    expect(messages[1].traceContext).toBe(rows[1].traceContext);
  });

  it('leaves a lone entry an object, its id the message id, as a relay batch of one sends it', () => {
    const lone = entry(orgA);
    expect(outboxMessages([lone])).toEqual([
      { subject: lone.subject, payload: lone.payload, id: lone.id, traceContext: lone.traceContext },
    ]);
  });

  it('gives the same rows the same message id, and other rows another', () => {
    const rows = [entry(orgA), entry(orgA), entry(orgA)];
    const [first] = outboxMessages(rows);
    expect(outboxMessages(rows.map((row) => ({ ...row })))[0].id).toBe(first.id);
    // Taken again with one row missing (another replica holds it): not dropped as a copy.
    expect(outboxMessages([rows[0], rows[2]])[0].id).not.toBe(first.id);
    expect(outboxMessages([rows[0], rows[1]])[0].id).not.toBe(first.id);
    expect(first.id).not.toBe(rows[0].id);
  });

  it('starts another message at the limits of entries and size', () => {
    const many = Array.from({ length: 7 }, () => entry(orgA));
    expect(outboxMessages(many, { entries: 3, chars: 1e6 }).map((m) => entriesOf(m.payload).length)).toEqual([
      3, 3, 1,
    ]);
    const large = Array.from({ length: 4 }, () => entry(orgA, 1_000));
    expect(
      outboxMessages(large, { entries: 100, chars: 2 * large[0].payload.length }).map(
        (m) => entriesOf(m.payload).length,
      ),
    ).toEqual([2, 2]);
    // An entry larger than the limit goes alone, as every entry did before.
    const huge = entry(orgA, 5_000);
    expect(outboxMessages([huge, entry(orgA)], { entries: 100, chars: 1_000 })).toHaveLength(2);
  });

  it('keeps every message of a full relay batch under NATS’s default max_payload', () => {
    // 100 rows (the relay's batch) of entries with 16 KB of non-ASCII text each.
    const rows = Array.from({ length: 100 }, () => entry(orgA, 0)).map((row) => ({
      ...row,
      payload: JSON.stringify({ id: row.id, note: '€'.repeat(16_000) }),
    }));
    const messages = outboxMessages(rows);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) expect(Buffer.byteLength(message.payload)).toBeLessThan(1024 * 1024);
    expect(messages.flatMap((message) => entriesOf(message.payload).map(({ id }) => id))).toEqual(
      rows.map((row) => row.id),
    );
  });
});
