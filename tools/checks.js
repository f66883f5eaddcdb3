// What `npm test` runs before jest, side by side: the type check, the lint and the build. Each
// prints its output once it has finished, and the command fails if any does. The build is here
// because the tests that run the platform as processes run the compiled services: built once
// before jest starts, their own build step finds nothing to do, and two of them running at once
// never compile into the same directory together.
const { spawn } = require('node:child_process');

const CHECKS = ['typecheck', 'lint', 'build'];

function run(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code) => resolve({ script, code, output: Buffer.concat(output).toString('utf8') }));
  });
}

(async () => {
  const started = Date.now();
  const results = await Promise.all(CHECKS.map(run));
  for (const { script, code, output } of results) {
    process.stdout.write(`\n> ${script}: ${code === 0 ? 'passed' : `failed (exit ${code})`}\n${output}`);
  }
  process.stdout.write(`\nchecks and build: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.exit(results.every(({ code }) => code === 0) ? 0 : 1);
})();
