import { JsMsg, headers } from 'nats';
import { deadLetterSubject } from '@licensing/contracts';
import { BusClient } from './bus-client';

/** Headers a dead letter carries beside the original bytes: why it was set aside, and where it came from. */
export const DeadLetterHeaders = {
  reason: 'Licensing-Dead-Letter-Reason',
  stream: 'Licensing-Original-Stream',
  subject: 'Licensing-Original-Subject',
  sequence: 'Licensing-Original-Sequence',
} as const;

/**
 * Sets a message aside for good: its bytes go to the dead-letter stream (`DEAD_LETTERS`, subject
 * `licensing.dead-letters.<durable>`) with the reason and its origin, and only once that stream has
 * stored it is the original terminated. The copy is de-duplicated by origin, so a consumer that
 * crashes in between and sets it aside again leaves one dead letter. If the dead-letter stream
 * cannot be reached the promise rejects and the original stays unacknowledged: it comes back.
 */
export async function deadLetter(
  bus: BusClient,
  message: JsMsg,
  durable: string,
  reason: string,
): Promise<void> {
  const origin = headers();
  // A header value is one line: keep the reason readable and bounded.
  origin.set(DeadLetterHeaders.reason, reason.replace(/[\r\n]+/g, ' ').slice(0, 1_000));
  origin.set(DeadLetterHeaders.stream, message.info.stream);
  origin.set(DeadLetterHeaders.subject, message.subject);
  origin.set(DeadLetterHeaders.sequence, String(message.seq));
  await bus.publishDurable(
    deadLetterSubject(durable),
    message.data,
    `${message.info.stream}:${message.seq}`,
    origin,
  );
  message.term();
}
