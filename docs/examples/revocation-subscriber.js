#!/usr/bin/env node
// Prints every license revocation, for every organization, as it happens — and those that happened
// while it was not running, because its durable consumer remembers where it stopped.
//
//   node docs/examples/revocation-subscriber.js            # against npm start's NATS
//   NATS_URL=nats://nats:4222 BUS_NAMESPACE=staging node docs/examples/revocation-subscriber.js
const { AckPolicy, DeliverPolicy, connect } = require('nats');

const namespace = process.env.BUS_NAMESPACE ?? '';
const prefix = namespace ? `${namespace}.` : '';
const stream = namespace ? `${namespace}_LICENSING_EVENTS` : 'LICENSING_EVENTS';
const durable = process.env.CONSUMER ?? 'revocation-subscriber-example';

async function main() {
  const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  const jsm = await nc.jetstreamManager();
  // Idempotent: creates the durable consumer the first time, finds it afterwards.
  await jsm.consumers.add(stream, {
    durable_name: durable,
    filter_subject: `${prefix}licensing.events.*.license.revoked`,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New, // DeliverPolicy.All to replay the last 7 days
  });
  const consumer = await nc.jetstream().consumers.get(stream, durable);
  const messages = await consumer.consume();
  process.on('SIGINT', () => messages.stop());
  console.log(`Waiting for revocations on ${stream} (Ctrl-C to stop)`);
  for await (const message of messages) {
    const event = message.json(); // {id, type, org_id, occurred_at, data}
    console.log(`${event.occurred_at} org ${event.org_id} revoked ${event.data.serial} (license ${event.data.id})`);
    message.ack(); // ack after your own work is done: unacknowledged events are redelivered
  }
  await nc.drain();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
