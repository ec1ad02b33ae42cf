import { execFile, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { jsonOf } from '../support/harness';
import { launch, ROOT, stop, until } from '../support/processes';

// What the container image runs (Dockerfile, docker-compose.yml): the TypeScript compiled by
// `npm run build`, started with plain node. No Docker engine here, so the same build goes to a
// folder inside the clone (node_modules resolve from there) and runs against the real services.
const DIST = path.join(ROOT, '.data', 'test', 'dist');
const PORT = 19000 + Math.floor(Math.random() * 1000);
const BASE = `http://127.0.0.1:${PORT}`;

let api: ChildProcess;
let workers: ChildProcess;

beforeAll(async () => {
  await rm(DIST, { recursive: true, force: true });
  await promisify(execFile)(
    path.join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-p', 'tsconfig.build.json', '--outDir', DIST],
    {
      cwd: ROOT,
    },
  );
  api = launch(path.join(DIST, 'api', 'server.js'), [], { PORT: String(PORT), HOST: '127.0.0.1' });
  workers = launch(path.join(DIST, 'workers', 'main.js'));
}, 180_000);

afterAll(() => {
  for (const child of [api, workers]) if (child?.exitCode === null) child.kill('SIGKILL');
});

test('the compiled API, workers and operator CLI serve /api/v1/system with every pool up, and stop cleanly', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    path.join(DIST, 'scripts', 'cli', 'main.js'),
    'token',
    '--tenant',
    'image',
    '--create-tenant',
    '--email',
    'ops@image.test',
    '--roles',
    'admin',
  ]);
  const token = stdout.trim();
  const system = await until('system ok', 90, async () => {
    const body = await jsonOf(await fetch(`${BASE}/api/v1/system`, { headers: { authorization: `Bearer ${token}` } }));
    return body.status === 'ok' ? body : undefined;
  });
  expect(Object.keys(system.worker_pools)).toEqual(['forge', 'search', 'platform']);
  // The reference page's assets come from a runtime dependency, not a dev one.
  expect((await fetch(`${BASE}/api/v1/reference`)).status).toBe(200);
  expect(await stop(api)).toBe(0);
  expect(await stop(workers)).toBe(0);
}, 150_000);
