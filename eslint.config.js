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
// `scope` says whose it is: a service's code imports its own scope and `shared`, nothing else.
const TYPES = {
  'type:app': ['type:contracts', 'type:data', 'type:util'],
  'type:data': ['type:contracts', 'type:data', 'type:util'],
  'type:contracts': ['type:contracts', 'type:util'],
  'type:util': ['type:util'],
  'type:testing': ['type:testing', 'type:contracts', 'type:data', 'type:util'],
  'type:e2e': ['type:app', 'type:testing', 'type:contracts', 'type:data', 'type:util'],
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
    'scope:shared',
  ],
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
    // nothing else may import an app.
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
);
