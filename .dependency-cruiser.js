// Import rules that ESLint's module boundaries cannot express: no import circle anywhere in the
// tree, and the gateway's layers. `npm run lint` runs it (`depcruise`); a broken rule fails the
// lint. The layers are described in docs/architecture.md ("The gateway's layers").

const GATEWAY = '^apps/gateway/src/';

// The gateway's layers, lowest first. A file may import its own layer and the ones below it.
// Features share a layer but never import each other: each stands on identity and below.
const LAYERS = [
  { name: 'settings', paths: ['config\\.ts$', 'migrations/'] },
  // The API's vocabulary: problems, route decorators, credentials and scopes. No I/O.
  { name: 'http', paths: ['http/'] },
  { name: 'audit', paths: ['audit/'] },
  // Organizations, API keys, tokens, organization settings and limits, authorization.
  { name: 'identity', paths: ['identity/'] },
  {
    name: 'features',
    paths: ['rate-limits/', 'idempotency/', 'signed-answers/', 'push/'],
    separate: true,
  },
  // The forwarding controllers, one file per resource.
  { name: 'routes', paths: ['routes/'] },
  // The request pipeline: Fastify hooks, direct routes, problem answers, the OpenAPI document, wiring.
  { name: 'edge', paths: ['edge/'] },
  // The entry points: the process, the operator CLI (cli.ts and its commands in cli/), the exports
  // for tests, the TypeORM CLI.
  { name: 'entry points', paths: ['(main|index|cli|data-source)\\.ts$', 'cli/'] },
];

const TESTS = '\\.(spec|int-spec|e2e-spec)\\.ts$';
const anyOf = (paths) => `${GATEWAY}(${paths.join('|')})`;

const layerRules = LAYERS.flatMap((layer, rank) => {
  const above = LAYERS.slice(rank + 1).flatMap(({ paths }) => paths);
  const rules = [];
  if (above.length > 0) {
    rules.push({
      name: `gateway-layers: ${layer.name}`,
      comment: `The gateway's ${layer.name} layer imports only its own layer and the ones below it.`,
      severity: 'error',
      from: { path: anyOf(layer.paths), pathNot: TESTS },
      to: { path: anyOf(above) },
    });
  }
  if (layer.separate) {
    for (const folder of layer.paths) {
      rules.push({
        name: `gateway-layers: ${folder} stands alone`,
        comment: 'A feature folder imports no other feature: what two share belongs a layer lower.',
        severity: 'error',
        from: { path: anyOf([folder]), pathNot: TESTS },
        to: { path: anyOf(layer.paths.filter((other) => other !== folder)) },
      });
    }
  }
  return rules;
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle makes load order matter and hides which module owns what.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|tmp|coverage)/' },
    tsConfig: { fileName: 'tsconfig.base.json' },
    // Type-only imports count: a circle of types is still a circle for a reader.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
  },
};
