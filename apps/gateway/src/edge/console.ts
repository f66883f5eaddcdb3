import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { FastifyInstance } from 'fastify';

/** Where the browser console is served: static files, no API key (the page calls the API with one). */
const CONSOLE_PATH = '/console';

const CONSOLE_PATHS = /^\/console(\/|$|\?)/;
export const isConsolePath = (url: string): boolean => CONSOLE_PATHS.test(url);

/**
 * What the console's pages may do: load their own scripts, styles and images, call this origin's
 * API, and nothing else. No inline script or style element, no framing (clickjacking), no plugins,
 * no `<base>` rewriting, forms post only here.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Vite names every built asset after its content hash, so a URL under `assets/` never changes meaning. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The console's build output (Vite's `dist/apps/console`), found from the workspace root: the
 * nearest directory up from this file that holds a `package.json` (the checkout, or `/app` in the
 * image), whether the gateway runs from its sources or from `dist/`.
 */
export function consoleBuildDir(from = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, 'dist/apps/console');
}

/**
 * Serves the console at `/console/` (`/console` redirects there). `index.html` is `no-cache`, so a
 * deploy reaches the next page load; the hashed assets it names are cached for a year. Without a
 * build (`npm start` and the image build it), `/console` says so instead of a bare 404.
 */
export async function serveConsole(fastify: FastifyInstance, root = consoleBuildDir()): Promise<void> {
  // Security and cache headers for every answer under /console, the not-built one included.
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (!isConsolePath(request.url)) return payload;
    void reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-cache');
    return payload;
  });
  if (!existsSync(path.join(root, 'index.html'))) {
    const notBuilt =
      'The console has not been built: `npm start` builds it (or `node tools/build-console.js`).\n';
    for (const url of [CONSOLE_PATH, `${CONSOLE_PATH}/*`]) {
      fastify.get(url, async (_request, reply) => reply.code(503).type('text/plain').send(notBuilt));
    }
    return;
  }
  fastify.get(CONSOLE_PATH, async (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`, 301));
  await fastify.register(fastifyStatic, {
    root,
    prefix: `${CONSOLE_PATH}/`,
    decorateReply: false,
    cacheControl: false,
    dotfiles: 'deny',
    setHeaders: (reply, file) => {
      const relative = path.relative(root, file);
      void reply.header('cache-control', relative.startsWith(`assets${path.sep}`) ? IMMUTABLE : 'no-cache');
    },
  });
}
