// The console's build: `node tools/build-console.js` (which `npm start` runs when the output is
// missing or older than these sources). Preact's JSX through Vite's own transform (no plugin); every
// asset a hashed file under /console/assets/, nothing inlined, so the page runs under a CSP with
// no 'unsafe-inline' and no data: scripts.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
