import { SseParser } from './license-events';

describe('SseParser', () => {
  const all = (chunks: string[]) => {
    const parser = new SseParser();
    return { events: chunks.flatMap((chunk) => parser.feed(chunk)), parser };
  };

  it('reads events with their id, type and data, ignoring comments and unknown fields', () => {
    const { events, parser } = all([
      'retry: 2000\n\n: heartbeat\n\nid: 7\nevent: license.revoked\nfoo: bar\ndata: {"serial":"A"}\n\n',
    ]);
    expect(events).toEqual([{ id: '7', event: 'license.revoked', data: '{"serial":"A"}' }]);
    expect(parser.retryMs).toBe(2000);
    expect(parser.lastEventId).toBe('7');
  });

  // A CR that ends a chunk may be half of a CRLF: it is read with the next chunk.
  it('gives the same events whatever the chunks are cut at, CRLF and CR line ends included', () => {
    const text =
      'id: 1\r\nevent: ready\r\ndata: {}\r\n\r\nid: 2\revent: license.suspended\rdata: a\rdata: b\r\r\n';
    const expected = [
      { id: '1', event: 'ready', data: '{}' },
      { id: '2', event: 'license.suspended', data: 'a\nb' },
    ];
    for (let cut = 0; cut <= text.length; cut++) {
      expect(all([text.slice(0, cut), text.slice(cut)]).events).toEqual(expected);
    }
    expect(all(text.split('')).events).toEqual(expected);
  });

  it('dispatches nothing for an event without data, keeps ids across events, and ignores an id with NUL', () => {
    const { events, parser } = all(['id: 3\nevent: x\n\ndata: one\n\nid: 4\0\ndata: two\n\n']);
    expect(events).toEqual([
      { id: '3', event: 'message', data: 'one' },
      { id: '3', event: 'message', data: 'two' },
    ]);
    expect(parser.lastEventId).toBe('3');
  });

  it('waits for the blank line: an unfinished event is not dispatched', () => {
    expect(all(['id: 5\nevent: license.revoked\ndata: {}\n']).events).toEqual([]);
  });
});
