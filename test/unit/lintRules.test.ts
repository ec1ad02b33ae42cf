import { execFile } from 'node:child_process';
import path from 'node:path';

// The lint rules that keep workflow code deterministic, checked by the project's own eslint and
// config on snippets it is told live in workflows/ (and, for contrast, in activities/).
const ROOT = path.join(__dirname, '..', '..');

/** Each problem as `line: message`. (The CLI, not the ESLint class: jest cannot load the .mjs config.) */
function problems(file: string, code: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const lint = execFile(
      path.join(ROOT, 'node_modules', '.bin', 'eslint'),
      ['--stdin', '--stdin-filename', file, '--format', 'json'],
      { cwd: ROOT },
      (err, stdout) => {
        // Exit code 1 means problems found; anything else without output is a real failure.
        if (err && !stdout) return reject(err);
        const [result] = JSON.parse(stdout) as { messages: { line: number; message: string }[] }[];
        resolve(result.messages.map((m) => `${m.line}: ${m.message}`));
      },
    );
    lint.stdin!.end(code);
  });
}

test('workflow code may not import Node built-ins, I/O packages or, from outside workflows/, anything but types', async () => {
  const forbidden = [
    "import { readFile } from 'node:fs/promises';",
    "import { spawn } from 'child_process';",
    "import knex from 'knex';",
    "import { Client } from '@temporalio/client';",
    "import { withTenant } from '../db/tenancy';",
    'export const used = [readFile, spawn, knex, Client, withTenant];',
  ];
  const found = await problems('workflows/example.ts', forbidden.join('\n'));
  expect(found).toEqual([
    expect.stringMatching(/^1: .*Workflow code does no I\/O/),
    expect.stringMatching(/^2: .*Workflow code does no I\/O/),
    expect.stringMatching(/^3: .*Workflow code does no I\/O/),
    expect.stringMatching(/^4: .*Workflow code does no I\/O/),
    expect.stringMatching(/^5: .*Workflows import only types from outside workflows\//),
  ]);
}, 30_000);

test('a workflow may import the workflow SDK, other workflow files and types from anywhere; an activity may do I/O', async () => {
  const allowed = [
    "import { proxyActivities } from '@temporalio/workflow';",
    "import { TASK_QUEUES } from './taskQueues';",
    "import type { ForgeActivities } from '../activities/forge';",
    'export const used = [proxyActivities, TASK_QUEUES] as const;',
    'export type Used = ForgeActivities;',
  ];
  expect(await problems('workflows/example.ts', allowed.join('\n'))).toEqual([]);
  expect(await problems('activities/example.ts', "import { readFile } from 'node:fs/promises';\nexport const read = readFile;\n")).toEqual([]);
}, 30_000);
