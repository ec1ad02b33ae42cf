import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

// The container image installs `dependencies` only (npm install --omit=dev). A package that
// the shipped code loads but that sits in devDependencies would work in every test and fail
// in the image: this catches it from the source.
const ROOT = path.join(__dirname, '..', '..');
const SHIPPED = ['api', 'core', 'workflows', 'activities', 'workers', 'db', 'search', 'scripts/cli'];

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js)$/.test(entry.name) ? [full] : [];
  });
}

/** Packages a file loads at run time: value imports, re-exports, require and dynamic import. */
function runtimePackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^;'"]*?\s+from\s+)?'([^']+)'/gm),
    ...source.matchAll(/\b(?:require|require\.resolve|import)\(\s*'([^']+)'\s*\)/g),
  ].map((match) => match[1]);
  return specifiers
    .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:') && !builtinModules.includes(spec))
    .map((spec) =>
      spec
        .split('/')
        .slice(0, spec.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

test('the package finder sees value imports, multi-line imports and requires, and skips type-only imports', () => {
  const source = [
    "import Koa from 'koa';",
    "import {\n  a,\n  b,\n} from '@temporalio/client/lib/x';",
    "import type { Knex } from 'knex';",
    "export { c } from 'pino';",
    "const d = require('pg');",
    "import './local';",
    "import { e } from 'node:fs';",
  ].join('\n');
  expect(runtimePackages(source).sort()).toEqual(['@temporalio/client', 'koa', 'pg', 'pino']);
});

test('every package the shipped code loads is a runtime dependency, not a dev one', () => {
  const { dependencies } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const missing = SHIPPED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))
    .flatMap((file) =>
      runtimePackages(readFileSync(file, 'utf8')).map((pkg) => `${pkg} (${path.relative(ROOT, file)})`),
    )
    .filter((entry) => !(entry.split(' ')[0] in dependencies));
  expect(missing).toEqual([]);
});
