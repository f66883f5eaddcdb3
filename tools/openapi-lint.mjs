#!/usr/bin/env node
// Lints the OpenAPI document with Redocly's `recommended` ruleset, the one client generators and
// API portals expect a document to pass:
//   node tools/openapi-lint.mjs http://localhost:3000/openapi.json    (a running gateway, or a file)
// Prints each problem and exits 1 when any is an error. With --json, prints
// {errors, warnings, problems: [{severity, rule, message, pointer}]} instead (the tests read it).
import { readFile } from 'node:fs/promises';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const args = process.argv.slice(2);
const json = args.includes('--json');
const source = args.find((arg) => !arg.startsWith('--'));
if (!source) {
  process.stderr.write('usage: node tools/openapi-lint.mjs <file or URL of openapi.json> [--json]\n');
  process.exit(2);
}

const text = /^https?:\/\//.test(source)
  ? await (await fetch(source)).text()
  : await readFile(source, 'utf8');
const config = await createConfig({ extends: ['recommended'] });
const problems = (await lintFromString({ source: text, absoluteRef: 'openapi.json', config })).map(
  (problem) => ({
    severity: problem.severity,
    rule: problem.ruleId,
    message: problem.message,
    pointer: problem.location?.[0]?.pointer,
  }),
);
const errors = problems.filter((problem) => problem.severity === 'error').length;
const warnings = problems.filter((problem) => problem.severity === 'warn').length;

if (json) {
  process.stdout.write(`${JSON.stringify({ errors, warnings, problems })}\n`);
} else {
  for (const problem of problems) {
    process.stdout.write(
      `${problem.severity.padEnd(5)} ${problem.rule}: ${problem.message} (${problem.pointer})\n`,
    );
  }
  process.stdout.write(`${errors} errors, ${warnings} warnings (Redocly recommended)\n`);
}
process.exit(errors > 0 ? 1 : 0);
