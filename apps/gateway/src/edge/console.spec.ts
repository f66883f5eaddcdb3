import path from 'node:path';
import Fastify from 'fastify';
import { CONSOLE_CSP, consoleBuildDir, isConsolePath, serveConsole } from './console';

const ROOT = path.join(__dirname, '../../../..');

describe('the console route', () => {
  it("finds the build under the workspace root's dist/, from the sources or from dist/", () => {
    expect(consoleBuildDir(__dirname)).toBe(path.join(ROOT, 'dist/apps/console'));
    expect(consoleBuildDir(path.join(ROOT, 'dist/apps/gateway/src/edge'))).toBe(
      path.join(ROOT, 'dist/apps/console'),
    );
  });

  it('matches /console and what is under it, nothing else', () => {
    expect(['/console', '/console/', '/console/assets/a.js', '/console?x'].every(isConsolePath)).toBe(true);
    expect(['/consoles', '/api/v1/console', '/', '/docs'].some(isConsolePath)).toBe(false);
  });

  it('without a build, answers 503 with how to build it, under the same CSP', async () => {
    const fastify = Fastify();
    await serveConsole(fastify, path.join(ROOT, 'tmp/no-console-build-here'));
    for (const url of ['/console', '/console/', '/console/assets/index.js']) {
      const response = await fastify.inject({ method: 'GET', url });
      expect([url, response.statusCode]).toEqual([url, 503]);
      expect(response.body).toContain('tools/build-console.js');
      expect(response.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(response.headers['cache-control']).toBe('no-cache');
    }
    expect((await fastify.inject({ method: 'GET', url: '/other' })).headers['content-security-policy']).toBe(
      undefined,
    );
    await fastify.close();
  });
});
