import { createServer } from 'node:net';
import { launch } from '../support/processes';

// Started while a service is down, the API says which one and how to bring the local services
// up, instead of failing requests with nothing said at start.

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('an API started with PostgreSQL and Elasticsearch unreachable names each, and says how to start the services', async () => {
  const [pgPort, esPort] = [await closedPort(), await closedPort()];
  const api = launch(
    'api/server.ts',
    [],
    {
      PORT: '0',
      LOG_LEVEL: 'warn',
      SHIPYARD_PG_PORT: String(pgPort),
      DATABASE_URL: `postgres://shipyard_app:shipyard_app@127.0.0.1:${pgPort}/shipyard`,
      ELASTICSEARCH_URL: `http://127.0.0.1:${esPort}`,
    },
    { relay: false, stdout: true },
  );
  const warnings = new Map<string, { msg: string; address: string }>();
  let buffered = '';
  try {
    await new Promise<void>((resolve, reject) => {
      api.on('exit', (code) => reject(new Error(`the API exited (${code}) before warning`)));
      api.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const entry = JSON.parse(line) as { service?: string; msg: string; address: string };
          if (entry.service) warnings.set(entry.service, entry);
        }
        if (warnings.has('database') && warnings.has('elasticsearch')) resolve();
      });
    });
  } finally {
    api.kill('SIGKILL');
  }
  expect(warnings.get('database')).toMatchObject({
    address: `127.0.0.1:${pgPort}`,
    msg: expect.stringContaining('npm run services up'),
  });
  expect(warnings.get('elasticsearch')).toMatchObject({
    address: `http://127.0.0.1:${esPort}`,
    msg: expect.stringContaining('npm run services up'),
  });
  expect(warnings.has('temporal')).toBe(false);
}, 60_000);
