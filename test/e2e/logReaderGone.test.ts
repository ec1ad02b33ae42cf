import { once } from 'node:events';
import { freePort, launch, until } from '../support/processes';

// A process whose log reader has gone away (a supervisor or pipe that exited first) still stops
// on SIGTERM: its last log lines meet a closed pipe, and that must not keep it alive.

jest.setTimeout(60_000);

test('the API exits on SIGTERM even when the reader of its stdout went away just before', async () => {
  const port = await freePort();
  const api = launch('api/server.ts', [], { PORT: String(port), LOG_LEVEL: 'info' }, { stdout: true });
  const exited = once(api, 'exit');
  try {
    await until('the API answering', 30, async () =>
      (await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined,
    );
    // Request lines wait in the log's buffer; then the reader goes, and the stop signal follows.
    for (let i = 0; i < 20; i++) await fetch(`http://127.0.0.1:${port}/healthz`);
    api.stdout!.destroy();
    api.kill('SIGTERM');
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000)),
    ]);
    expect(stopped).toBe(true);
  } finally {
    api.kill('SIGKILL');
  }
});
