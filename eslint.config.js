// Lint rules that catch real bugs (type-aware) and the architecture's import rules. Formatting is
// Prettier's job, not ESLint's. The boundaries rule reads Nx's cached project graph, so
// `npm run lint` computes it first (`nx show projects`): on a fresh clone the rule would otherwise
// be skipped with a warning.
const js = require('@eslint/js');
const nx = require('@nx/eslint-plugin');
const globals = require('globals');
const tseslint = require('typescript-eslint');

// What a project may import, by its tags (project.json). `type` says what a project is:
//   app        a deployable service (apps/*)
//   e2e        the end-to-end suite, which boots every app (apps/gateway-e2e)
//   contracts  the messages between services (libs/contracts)
//   data       libraries that do I/O: PostgreSQL, the outbox, NATS (libs/shared/{database,events,messaging})
//   util       framework-free or I/O-free helpers (libs/license-format, libs/shared/{config,errors,logging})
//   testing    test helpers and factories (libs/shared/testing): only tests may import it
//   tools      the workspace's scripts and process-level tests (tools/): not part of any app
//   bench      the benchmarks (bench/), plain JavaScript run by node against the compiled platform
// `scope` says whose it is: a service's code imports its own scope and `shared`, nothing else.
const TYPES = {
  'type:app': ['type:contracts', 'type:data', 'type:util'],
  'type:data': ['type:contracts', 'type:data', 'type:util'],
  'type:contracts': ['type:contracts', 'type:util'],
  'type:util': ['type:util'],
  'type:testing': ['type:testing', 'type:contracts', 'type:data', 'type:util'],
  'type:e2e': ['type:app', 'type:testing', 'type:contracts', 'type:data', 'type:util'],
  'type:tools': ['type:testing', 'type:contracts', 'type:data', 'type:util'],
  // Through tools/register-paths.js, which resolves `@licensing/*` to the compiled libraries.
  'type:bench': ['type:contracts', 'type:data', 'type:util'],
};
const SCOPES = {
  'scope:shared': ['scope:shared'],
  'scope:gateway': ['scope:gateway', 'scope:shared'],
  'scope:product': ['scope:product', 'scope:shared'],
  'scope:license': ['scope:license', 'scope:shared'],
  'scope:revocation': ['scope:revocation', 'scope:shared'],
  'scope:analytics': ['scope:analytics', 'scope:shared'],
  'scope:webhook': ['scope:webhook', 'scope:shared'],
  // The `licensing` command line (apps/cli): an API client and the offline verifier.
  'scope:cli': ['scope:cli', 'scope:shared'],
  // The on-premise relay (apps/relay): its own store and server, and the offline verifier.
  'scope:relay': ['scope:relay', 'scope:shared'],
  // The browser console (apps/console): speaks to the public API over HTTP, imports no library.
  'scope:console': ['scope:console'],
  'scope:e2e': [
    'scope:gateway',
    'scope:product',
    'scope:license',
    'scope:revocation',
    'scope:analytics',
    'scope:webhook',
    'scope:cli',
    'scope:relay',
    'scope:shared',
  ],
  'scope:tools': ['scope:tools', 'scope:shared'],
  'scope:bench': ['scope:bench', 'scope:shared'],
};

/**
 * @param test  a test file (spec, int-spec, e2e-spec) of any project may also import `type:testing`.
 * @param allow import paths exempt from the rule.
 */
const boundaries = ({ test = false, allow = [] } = {}) => [
  'error',
  {
    allow,
    enforceBuildableLibDependency: false,
    banTransitiveDependencies: false,
    depConstraints: [
      ...Object.entries(TYPES).map(([sourceTag, tags]) => ({
        sourceTag,
        onlyDependOnLibsWithTags: test && !tags.includes('type:testing') ? [...tags, 'type:testing'] : tags,
      })),
      ...Object.entries(SCOPES).map(([sourceTag, tags]) => ({ sourceTag, onlyDependOnLibsWithTags: tags })),
    ],
  },
];

const TEST_FILES = ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'];

// The paths that scripts in tools/ and bench/ load by path, plain node knowing no `@licensing/*`
// alias until tools/register-paths.js is loaded (each an exact match: `allow` takes regexes).
const TOOLS_ALLOW = [
  // The workspace's own settings.
  '^(\\.\\./)+(tsconfig\\.base\\.json|jest\\.preset\\.js)$',
  // What resolves `@licensing/*` to the compiled libraries.
  '^(\\.\\./)+tools/register-paths$',
  // The process harness and the test servers' addresses, shared with the tests (libs/shared/testing).
  '^\\.\\./\\.\\./libs/shared/testing/src/(processes|wait-for)$',
  '^\\.\\./libs/shared/testing/src/infrastructure\\.json$',
  // The unit tests of the benchmarks' code, which run with the rest of tools/ in jest.
  '^\\.\\./bench/(lib|soak)/[a-z-]+$',
];

module.exports = tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/tmp/**', '**/coverage/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx, '@typescript-eslint': tseslint.plugin },
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      eqeqeq: ['error', 'always'],
      '@nx/enforce-module-boundaries': boundaries(),
    },
  },
  {
    // Tests may use the shared test helpers and factories; production code may not.
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': boundaries({ test: true }) },
  },
  {
    // The end-to-end harness boots every service in its own process through each app's index.ts;
    // besides it, only the process-level tests in tools/ may import an app (below).
    files: ['apps/gateway-e2e/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries({ allow: ['@licensing/app/*'] }) },
  },
  {
    // Plain CommonJS scripts run by Node (tools, benchmarks, jest and lint settings): no type
    // information, so the rules that catch bugs without it.
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
    rules: {
      ...js.configs.recommended.rules,
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // tools/ and bench/ are projects too (tags in their project.json), their plain JavaScript
    // included: `require` is checked like `import`.
    files: ['tools/**/*.{ts,js}', 'bench/**/*.js'],
    plugins: { '@nx': nx },
    rules: { '@nx/enforce-module-boundaries': boundaries({ allow: TOOLS_ALLOW }) },
  },
  {
    // The SDKs' conformance vectors are made by the platform's own signing code. Three pieces of it
    // are pure functions inside services (a revocation list, an activation file, a signed answer):
    // the generator imports exactly those files, and nothing else of an app.
    files: ['sdks/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({
        allow: [
          '^(\\.\\./)+apps/license-service/src/revocation-lists/revocation-list-document$',
          '^(\\.\\./)+apps/license-service/src/activations/activation-file$',
          '^(\\.\\./)+apps/gateway/src/signed-answers/signed-answer$',
          // The online clients' end-to-end specs start the platform as the gateway's e2e specs do.
          '^(\\.\\./)+apps/gateway-e2e/src/support/stack$',
        ],
      }),
    },
  },
  {
    // The Python SDK's online test starts the platform as the end-to-end suite does, with its helper.
    files: ['sdks/python/*.int-spec.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({
        allow: ['^\\.\\./\\.\\./apps/gateway-e2e/src/support/stack$'],
      }),
    },
  },
  {
    // The SDKs' relay clients are tested against a real relay process, started by the relay's own
    // test helper (a product key of the test's own, a relay file signed with it). The JavaScript
    // SDK's spec may not import it (the relay imports that SDK): it runs relay-fixture-main.ts.
    files: ['sdks/*/relay.int-spec.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({
        test: true,
        allow: ['^(\\.\\./)+apps/relay/src/testing/relay-process$'],
      }),
    },
  },
  {
    // The process-level tests boot an app, or use its helpers, through its index.ts.
    files: ['tools/*.int-spec.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries({ allow: [...TOOLS_ALLOW, '@licensing/app/*'] }) },
  },
  {
    files: ['bench/analytics/run.js'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({
        allow: [...TOOLS_ALLOW, '@licensing/app/analytics-service'],
      }),
    },
  },
  {
    // Measures the gateway's rate limiter alone, from its compiled internals.
    files: ['bench/rate-limit-cost.js'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries({
        allow: [...TOOLS_ALLOW, '^\\.\\./dist/apps/gateway/src/'],
      }),
    },
  },
);
