import { LicenseClientError, fetchOf, parseObject, problemOf, send, type Endpoint } from './request';

describe('the shared request helpers', () => {
  const endpoint = (fetch: Endpoint['fetch'], timeoutMs = 1_000): Endpoint => ({
    baseUrl: 'http://service.test',
    fetch,
    timeoutMs,
    peer: 'the test service',
  });

  it('sends JSON with the given headers and returns the status and text', async () => {
    const fetch = jest.fn(async () => new Response('{"a":1}', { status: 201 }));
    const reply = await send(endpoint(fetch), 'POST', '/v1/x', { b: 2 }, { authorization: 'Bearer t' });
    expect(reply.response.status).toBe(201);
    expect(reply.text).toBe('{"a":1}');
    expect(fetch).toHaveBeenCalledWith('http://service.test/v1/x', {
      method: 'POST',
      headers: { authorization: 'Bearer t', accept: 'application/json', 'content-type': 'application/json' },
      body: '{"b":2}',
      signal: expect.any(AbortSignal),
    });
    await send(endpoint(fetch), 'GET', '/v1/y', undefined, {});
    expect(fetch).toHaveBeenLastCalledWith('http://service.test/v1/y', {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal: expect.any(AbortSignal),
    });
  });

  it('reports a failed fetch as `network`, naming the peer and the cause', async () => {
    const fetch = jest.fn(() =>
      Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') })),
    );
    await expect(send(endpoint(fetch), 'GET', '/', undefined, {})).rejects.toMatchObject({
      name: 'LicenseClientError',
      code: 'network',
      status: 0,
      offline: true,
      message: 'the test service is unreachable: fetch failed (connect ECONNREFUSED)',
    });
  });

  it('times out a body that stops coming', async () => {
    const fetch = jest.fn(async (_url: unknown, init?: RequestInit) => {
      const signal = init!.signal!;
      const text = () => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', reject));
      return { ok: true, status: 200, text } as unknown as Response;
    });
    await expect(send(endpoint(fetch, 20), 'GET', '/', undefined, {})).rejects.toMatchObject({
      code: 'timeout',
      status: 0,
      message: 'no answer within 20 ms',
    });
  });

  it("reads a problem's code and detail (or title), else the HTTP status", () => {
    const problem = (status: number, text: string) =>
      problemOf({ response: new Response(null, { status }), text });
    expect(problem(403, '{"code":"forbidden","detail":"no","title":"Forbidden"}')).toMatchObject({
      code: 'forbidden',
      message: 'no',
      status: 403,
      offline: false,
    });
    expect(problem(404, '{"code":"not_found","title":"Not Found"}')).toMatchObject({
      code: 'not_found',
      message: 'Not Found',
    });
    expect(problem(502, 'Bad gateway')).toMatchObject({
      code: 'http_502',
      message: 'HTTP 502',
      offline: true,
    });
    expect(problem(400, '{"code":7,"detail":["x"]}')).toMatchObject({
      code: 'http_400',
      message: 'HTTP 400',
    });
    expect(problem(429, '')).toMatchObject({ code: 'http_429', offline: true });
  });

  it('parses only JSON objects', () => {
    expect(parseObject('{"a":1}')).toEqual({ a: 1 });
    for (const text of ['', 'null', '[1]', '"s"', '{broken']) expect(parseObject(text)).toBeUndefined();
  });

  it("uses the given fetch, else the runtime's, and needs one", async () => {
    const given = jest.fn();
    expect(fetchOf(given as unknown as typeof fetch)).toBe(given);
    const runtime = globalThis.fetch;
    const stub = jest.fn(async () => new Response('ok'));
    try {
      globalThis.fetch = stub;
      await fetchOf(undefined)('http://x.test');
      expect(stub).toHaveBeenCalledWith('http://x.test', undefined);
      delete (globalThis as { fetch?: typeof fetch }).fetch;
      expect(() => fetchOf(undefined)).toThrow('no fetch in this runtime: pass options.fetch');
    } finally {
      globalThis.fetch = runtime;
    }
  });

  it('keeps LicenseClientError an Error with its name', () => {
    const error = new LicenseClientError('timeout', 'late', 0);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('LicenseClientError');
    expect(error.offline).toBe(true);
  });
});
