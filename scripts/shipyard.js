#!/usr/bin/env node
// `npx shipyard …`: runs the TypeScript operator CLI through tsx.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');

const tsx = path.join(__dirname, '..', 'node_modules', '.bin', 'tsx');
if (!existsSync(tsx)) {
  process.stderr.write(`shipyard: ${tsx} is missing: install the dependencies first (npm install)\n`);
  process.exit(1);
}
const result = spawnSync(tsx, [path.join(__dirname, 'cli', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
if (result.error) process.stderr.write(`shipyard: could not run the CLI: ${result.error.message}\n`);
// A signal ends the child without a status: say which, rather than a bare exit code.
if (result.signal) process.stderr.write(`shipyard: the CLI was stopped by ${result.signal}\n`);
process.exit(result.status ?? 1);
