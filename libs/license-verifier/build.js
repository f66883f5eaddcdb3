// Builds the publishable package into dist/esm and dist/cjs (or into the directory given as the
// first argument): plain tsc twice, then the two things tsc leaves to us — `.js` on the ESM build's
// relative imports (browsers and Node's ESM loader need them; the sources, like the rest of the
// repository, omit them) and a package.json in each build saying which module system it is.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = __dirname;
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const tsc = require.resolve('typescript/bin/tsc');

const builds = [
  { dir: 'esm', module: 'ES2022', moduleResolution: 'Bundler', type: 'module' },
  { dir: 'cjs', module: 'CommonJS', moduleResolution: 'Node10', type: 'commonjs' },
];

for (const build of builds) {
  const dir = path.join(out, build.dir);
  fs.rmSync(dir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      tsc,
      '-p',
      path.join(root, 'tsconfig.lib.json'),
      '--module',
      build.module,
      '--moduleResolution',
      build.moduleResolution,
      '--outDir',
      dir,
    ],
    { stdio: 'inherit' },
  );
  if (build.type === 'module') addJsExtensions(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ type: build.type })}\n`);
}

function addJsExtensions(dir) {
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.js') && !name.endsWith('.d.ts')) continue;
    const file = path.join(dir, name);
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace(/(from\s+['"])(\.\.?\/[^'"]+?)(['"])/g, '$1$2.js$3'));
  }
}
