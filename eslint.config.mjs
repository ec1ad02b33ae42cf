import js from '@eslint/js';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// The layers, top to bottom (README "Architecture"):
//   api/ (HTTP), workers/ + activities/ (Temporal)  →  search/ (the engine)  →  core/ (domain)  →  db/ (connections, tenancy, schema)
// workflows/ sit beside them and import only types; core/ imports nothing of them. An import may only point down; each layer's
// forbidden folders are listed below, and a wrong import fails `npm test`.
const folder = (name) => `^(\\.\\./)+${name}(/|$)`;
const layerRule = (rules, extraPatterns = []) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      patterns: [
        ...Object.entries(rules).map(([name, { message, typesAllowed = false }]) => ({
          regex: folder(name),
          message,
          ...(typesAllowed && { allowTypeImports: true }),
        })),
        ...extraPatterns,
      ],
    },
  ],
});
const ONLY_SERVER = {
  message: 'Only the server entry, the benchmarks and tests import api/: move shared code to core/.',
};
const NOT_UP = (what) => ({
  message: `${what} is not below this layer: imports point down only (README "Architecture").`,
});
const WORKFLOW_TYPES = {
  message: 'Import workflow types only (`import type`); start workflows by name.',
  typesAllowed: true,
};

// Workflow code is replayed and must be deterministic: no I/O, no clocks or randomness of its
// own. It may import the workflow SDK and other workflow files; from anywhere else, types only.
const NO_IO = 'Workflow code does no I/O: do it in an activity.';
const WORKFLOW_IO_MODULES = [
  'knex',
  'pg',
  'pino',
  '@elastic/elasticsearch',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // A promise nobody awaits loses its error (an unhandled rejection ends the process) and its ordering.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['api/**/*.ts'],
    rules: layerRule({
      activities: NOT_UP('activities/ (worker code)'),
      workers: NOT_UP('workers/'),
      scripts: NOT_UP('scripts/'),
      workflows: WORKFLOW_TYPES,
    }),
  },
  {
    files: ['activities/**/*.ts', 'workers/**/*.ts'],
    rules: layerRule({ api: ONLY_SERVER, scripts: NOT_UP('scripts/'), workflows: WORKFLOW_TYPES }),
  },
  {
    // Core starts workflows by name through contracts it defines (e.g. `ForgeRunWorkflow`), which
    // the workflows implement: it imports nothing of workflows/, not even types.
    files: ['core/**/*.ts'],
    rules: layerRule({
      api: ONLY_SERVER,
      activities: NOT_UP('activities/'),
      workers: NOT_UP('workers/'),
      scripts: NOT_UP('scripts/'),
      workflows: NOT_UP('workflows/'),
      search: NOT_UP('search/'),
    }),
  },
  {
    // The engine's index definitions, documents, outbox drain and queries: used by api/ and the
    // search workers, standing on core/ and db/.
    files: ['search/**/*.ts'],
    rules: layerRule({
      api: ONLY_SERVER,
      activities: NOT_UP('activities/'),
      workers: NOT_UP('workers/'),
      scripts: NOT_UP('scripts/'),
      workflows: NOT_UP('workflows/'),
    }),
  },
  {
    // Migrations too: what a data migration needs of core/ (the keyring, to seal secrets) is
    // handed in by whoever runs them (db/knexfile.ts MigrationServices).
    files: ['db/**/*.ts'],
    rules: layerRule({
      core: NOT_UP('core/'),
      search: NOT_UP('search/'),
      api: NOT_UP('api/'),
      activities: NOT_UP('activities/'),
      workers: NOT_UP('workers/'),
      scripts: NOT_UP('scripts/'),
      workflows: NOT_UP('workflows/'),
    }),
  },
  {
    files: ['scripts/cli/**/*.ts'],
    rules: layerRule({ api: ONLY_SERVER }),
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...builtinModules, ...WORKFLOW_IO_MODULES].map((name) => ({ name, message: NO_IO })),
          patterns: [
            { group: ['node:*'], message: NO_IO },
            {
              // And the search-attribute keys, pure constants a child workflow's start needs.
              group: ['../*', '!../core', '../core/*', '!../core/searchAttributes'],
              allowTypeImports: true,
              message: 'Workflows import only types from outside workflows/.',
            },
          ],
        },
      ],
    },
  },
  // Plain CommonJS entry shims.
  { files: ['**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
