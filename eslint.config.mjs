import js from '@eslint/js';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// Workflow code is replayed and must be deterministic: no I/O, no clocks or randomness of its
// own. It may import the workflow SDK and other workflow files; from anywhere else, types only.
const NO_IO = 'Workflow code does no I/O: do it in an activity.';
const WORKFLOW_IO_MODULES = ['knex', 'pg', 'pino', '@elastic/elasticsearch', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
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
            { group: ['../*'], allowTypeImports: true, message: 'Workflows import only types from outside workflows/.' },
          ],
        },
      ],
    },
  },
  // Plain CommonJS entry shims.
  { files: ['**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
