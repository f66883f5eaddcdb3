// `npm test`'s static checks, the type check and the lint, run side by side: each prints its
// output once it has finished, and the command fails if either does.
const { spawn } = require('node:child_process');

const CHECKS = ['typecheck', 'lint'];

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
  process.stdout.write(`\nstatic checks: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.exit(results.every(({ code }) => code === 0) ? 0 : 1);
})();
