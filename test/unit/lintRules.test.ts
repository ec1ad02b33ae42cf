import { execFile } from 'node:child_process';
import path from 'node:path';

// The lint rules that keep workflow code deterministic and the layers' imports pointing down,
// checked by the project's own eslint and config on snippets it is told are the text of a real
// file of a layer (a real file, because the type-aware rules need it to be in the project).
const ROOT = path.join(__dirname, '..', '..');

// The import rules need no type information; leaving it out makes each run a few times faster.
const UNTYPED = [
  '--parser-options',
  'projectService:false',
  '--rule',
  '{"@typescript-eslint/no-floating-promises":"off"}',
];

/** Each problem as `line: message`. (The CLI, not the ESLint class: jest cannot load the .mjs config.) */
function problems(file: string, code: string, { typed = false } = {}): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const lint = execFile(
      path.join(ROOT, 'node_modules', '.bin', 'eslint'),
      ['--stdin', '--stdin-filename', file, '--format', 'json', ...(typed ? [] : UNTYPED)],
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
  const found = await problems('workflows/probe.ts', forbidden.join('\n'));
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
    "import { workerProbe } from './probe';",
    "import type { ForgeActivities } from '../activities/forge';",
    'export const used = [proxyActivities, workerProbe] as const;',
    'export type Used = ForgeActivities;',
  ];
  expect(await problems('workflows/probe.ts', allowed.join('\n'))).toEqual([]);
  expect(
    await problems(
      'activities/probe.ts',
      "import { readFile } from 'node:fs/promises';\nexport const read = readFile;\n",
    ),
  ).toEqual([]);
}, 30_000);

test('imports point down the layers: api and activities stand on core, core on db, only types come from workflows, and core takes nothing of them', async () => {
  const upward = {
    'core/ids.ts': [
      "import { buildApp } from '../api/app';",
      "import { forgeActivities } from '../activities/forge';",
      "import type { forgeRun } from '../workflows/forgeRun';",
    ],
    'db/pool.ts': ["import { loadConfig } from '../core/config';"],
    'activities/probe.ts': ["import { buildApiRouter } from '../api/http/router';"],
    'workers/main.ts': ["import { buildApp } from '../api/app';"],
    'api/app.ts': [
      "import { forgeActivities } from '../activities/forge';",
      "import { forgeRun } from '../workflows/forgeRun';",
    ],
    'scripts/cli/main.ts': ["import { buildApp } from '../../api/app';"],
  };
  for (const [file, imports] of Object.entries(upward)) {
    const found = (await problems(file, imports.join('\n'))).filter((p) => p.includes('is restricted'));
    expect({ file, found }).toEqual({
      file,
      found: imports.map((_, i) =>
        expect.stringMatching(
          new RegExp(`^${i + 1}: .*(is not below this layer|Only the server entry|workflow types only)`),
        ),
      ),
    });
  }
  const downward = [
    "import { withTenant } from '../../db/tenancy';",
    "import { loadConfig } from '../config';",
    'export const used = [withTenant, loadConfig];',
  ];
  expect(await problems('core/forge/runStore.ts', downward.join('\n'))).toEqual([]);
  const typesFromWorkflows = [
    "import type { forgeRun } from '../workflows/forgeRun';",
    'export type Used = typeof forgeRun;',
  ];
  expect(await problems('api/app.ts', typesFromWorkflows.join('\n'))).toEqual([]);
}, 60_000);

test('a promise nobody awaits or hands on is a lint error', async () => {
  const code = [
    'async function write(): Promise<void> {}',
    'write();',
    'void write();',
    'export const later = write();',
  ];
  expect(await problems('core/ids.ts', code.join('\n'), { typed: true })).toEqual([
    expect.stringMatching(/^2: Promises must be awaited/),
  ]);
}, 30_000);
