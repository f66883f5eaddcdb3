#!/usr/bin/env node
// What one rate-limit check costs the gateway: the GCRA script call of every authenticated request,
// 50 in flight against the local Redis, measured in the gateway's own CPU time. The hot paths'
// end-to-end figures on a shared 2-core box vary by more than this costs; this isolates it.
//
//   npm run build && node -r ./tools/register-paths.js bench/rate-limit-cost.js
require('reflect-metadata');
const { RateLimitService } = require('../dist/apps/gateway/src/rate-limits/rate-limit.service');
const { defaultLimits } = require('../dist/apps/gateway/src/identity/rate-limit-settings');
const { loadGatewayConfig } = require('../dist/apps/gateway/src/config');

const IN_FLIGHT = 50;
const PER_WORKER = 1000;

async function main() {
  const config = loadGatewayConfig({ BUS_NAMESPACE: `bench${process.pid}`, LOG_LEVEL: 'silent' });
  const limits = defaultLimits(config);
  const service = new RateLimitService(config, { limitsOf: () => limits });
  await service.onModuleInit();
  const auth = { orgId: '00000000-0000-4000-8000-000000000000', keyId: 'bench', scopes: ['client'] };
  const run = (n) =>
    Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = 0; i < n; i++) await service.consume(auth, 'client');
      }),
    );
  await run(200);
  const checks = IN_FLIGHT * PER_WORKER;
  for (let round = 0; round < 3; round++) {
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    await run(PER_WORKER);
    const used = process.cpuUsage(cpu);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    process.stdout.write(
      `${checks} checks: ${Math.round(checks / seconds)} checks/s, ` +
        `${((used.user + used.system) / checks).toFixed(1)} µs of gateway CPU per check\n`,
    );
  }
  if (service.counters.failedOpen > 0) process.stdout.write(`(${service.counters.failedOpen} failed open)\n`);
  await service.onApplicationShutdown();
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
