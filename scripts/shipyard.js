#!/usr/bin/env node
// `npx shipyard …`: runs the TypeScript operator CLI through tsx.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const tsx = path.join(__dirname, '..', 'node_modules', '.bin', 'tsx');
const result = spawnSync(tsx, [path.join(__dirname, 'cli', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
