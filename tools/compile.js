#!/usr/bin/env node
// Compiles the workspace's TypeScript into dist/ with SWC, file by file: no type check. The type
// check is `npm run typecheck` (tsc), which CI runs beside the build. Jest runs every test through
// SWC with the same options (jest.preset.js), so the compiled services are the code the tests ran.
//
// The files are the ones tsconfig.build.json names, read with TypeScript's own parser of that file,
// and each lands where `tsc -b tsconfig.build.json` put it: dist/<its path>.js, with a source map.
// A file whose output is newer than its source is left alone, so a second run takes a moment.
//
//   node tools/compile.js [tree]     (tree: the checkout to compile, this one by default)
const { existsSync, mkdirSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { swcOptions } = require('./swc-options');

/** The TypeScript sources tsconfig.build.json in `tree` compiles. */
function sourcesOf(tree) {
  const ts = require('typescript');
  const file = path.join(tree, 'tsconfig.build.json');
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, tree, undefined, file);
  if (parsed.errors.length > 0) {
    throw new Error(
      parsed.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('\n'),
    );
  }
  return { files: parsed.fileNames, outDir: parsed.options.outDir, rootDir: parsed.options.rootDir };
}

function isFresh(source, output) {
  return existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs;
}

/**
 * Compiles `tree` (default: this checkout) into its outDir. Returns how many files it compiled
 * and how many were already up to date. Throws on the first file SWC cannot parse.
 */
async function compile(tree = path.join(__dirname, '..')) {
  const swc = require('@swc/core');
  const { files, outDir, rootDir } = sourcesOf(tree);
  const options = swcOptions('typescript');
  let compiled = 0;
  let fresh = 0;
  await Promise.all(
    files.map(async (source) => {
      const output = path.join(outDir, path.relative(rootDir, source)).replace(/\.ts$/, '.js');
      if (isFresh(source, output)) {
        fresh += 1;
        return;
      }
      const { code, map } = await swc.transformFile(source, {
        ...options,
        sourceMaps: true,
        outputPath: output,
        sourceFileName: path.relative(path.dirname(output), source),
      });
      mkdirSync(path.dirname(output), { recursive: true });
      writeFileSync(`${output}.map`, map);
      writeFileSync(output, `${code}\n//# sourceMappingURL=${path.basename(output)}.map\n`);
      compiled += 1;
    }),
  );
  return { compiled, fresh };
}

module.exports = { compile };

if (require.main === module) {
  const started = Date.now();
  compile(process.argv[2] ? path.resolve(process.argv[2]) : undefined).then(
    ({ compiled, fresh }) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`compiled ${compiled} files (${fresh} up to date) in ${seconds} s\n`);
    },
    (error) => {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    },
  );
}
