import { spawn } from 'node:child_process';
import path from 'node:path';

// The process logger buffers its lines (core/logging.ts); these prove a line is not held back
// for long when traffic is light, and that what is pending is written when the process exits.

const ROOT = path.join(__dirname, '..', '..');

/** Runs `body` in a fresh process with a process logger `log`; resolves with its stdout's lines when it exits. */
function withLogger(body: string, onLine: (line: Record<string, unknown>) => void = () => {}) {
  const code = `const { createLogger } = require('./core/logging'); const log = createLogger({ logLevel: 'info' }, 'unit'); ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const [rest, ...complete] = (partial + chunk.toString()).split('\n').reverse();
    partial = rest;
    for (const line of complete.reverse()) {
      lines.push(JSON.parse(line));
      onLine(JSON.parse(line));
    }
  });
  return new Promise<Record<string, unknown>[]>((resolve) => child.on('close', () => resolve(lines)));
}

test('a lone line reaches stdout long before the process exits, not only at exit', async () => {
  let seenAt = 0;
  const lines = await withLogger(`setTimeout(() => log.info('alone'), 300); setTimeout(() => {}, 3300);`, (line) => {
    if (line.msg === 'alone') seenAt = Date.now();
  });
  const exitedAt = Date.now();
  expect(lines.map((line) => line.msg)).toEqual(['alone']);
  // Logged ~3 s before the exit; a buffer that waited for 4 KiB would hand it over only then.
  expect(exitedAt - seenAt).toBeGreaterThan(1500);
});

test('lines still buffered when the process exits are written before it goes', async () => {
  const lines = await withLogger(`for (let i = 0; i < 3; i++) log.info({ i }, 'pending'); process.exit(0);`);
  expect(lines.map((line) => line.i)).toEqual([0, 1, 2]);
});
