// Lint rules that catch real bugs (type-aware) and the architecture's import rules. Formatting is
// Prettier's job, not ESLint's. The boundaries rule reads Nx's cached project graph, so
// `npm run lint` computes it first (`nx show projects`): on a fresh clone the rule would otherwise
// be skipped with a warning.
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');

const boundaries = (allow = []) => [
  'error',
  {
    allow,
    enforceBuildableLibDependency: false,
    banTransitiveDependencies: false,
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
      { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
      { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
      { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:gateway', 'scope:shared'] },
      { sourceTag: 'scope:product', onlyDependOnLibsWithTags: ['scope:product', 'scope:shared'] },
      { sourceTag: 'scope:license', onlyDependOnLibsWithTags: ['scope:license', 'scope:shared'] },
      { sourceTag: 'scope:revocation', onlyDependOnLibsWithTags: ['scope:revocation', 'scope:shared'] },
      { sourceTag: 'scope:analytics', onlyDependOnLibsWithTags: ['scope:analytics', 'scope:shared'] },
    ],
  },
];

module.exports = tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/tmp/**', '**/coverage/**', '**/*.js'] },
  {
    files: ['**/*.ts'],
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
    // The end-to-end harness boots every service in its own process through each app's index.ts;
    // nothing else may import an app.
    files: ['apps/gateway-e2e/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['@licensing/app/*']) },
  },
);
