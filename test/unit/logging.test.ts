import { spawn } from 'node:child_process';
import path from 'node:path';

// The process logger buffers its lines (pino's destination, core/logging.ts); these prove a line is not held
// back for long when traffic is light, that what is pending is written when the process exits,
// and that lines arrive whole and in order however the writes fall.

const ROOT = path.join(__dirname, '..', '..');

/**
 * Runs `body` in a fresh process with a process logger `log`; resolves with its stdout's lines
 * when it exits. With `readAfterMs`, nothing is read from its stdout until then (a stalled reader).
 */
function withLogger(body: string, onLine: (line: Record<string, unknown>) => void = () => {}, readAfterMs = 0) {
  const code = `const { createLogger } = require('./core/logging'); const log = createLogger({ logLevel: 'info' }, 'unit'); ${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  // Decoded as a stream: a write may end inside a multi-byte character.
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const [rest, ...complete] = (partial + chunk).split('\n').reverse();
    partial = rest;
    for (const line of complete.reverse()) {
      lines.push(JSON.parse(line));
      onLine(JSON.parse(line));
    }
  });
  if (readAfterMs > 0) {
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), readAfterMs);
  }
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

test('lines arrive whole and in order across many writes, multi-byte text included', async () => {
  // ~2.5 MB: over a hundred 16 KiB writes, most of them while the one before is still in flight.
  const lines = await withLogger(
    `for (let i = 0; i < 20000; i++) log.info({ i, text: 'ünïcødé ✓ '.repeat(i % 7) }, 'many');`,
  );
  expect(lines).toHaveLength(20000);
  expect(lines.every((line, i) => line.i === i && line.text === 'ünïcødé ✓ '.repeat(i % 7))).toBe(true);
});

test('a line longer than a chunk (a long stack, a big error) arrives whole, in order with the lines around it', async () => {
  // 100 KiB lines (some multi-byte) between short ones: each needs a chunk of its own size.
  const lines = await withLogger(
    `for (let i = 0; i < 30; i++) log.info({ i, text: (i % 2 ? 'ü' : 'x').repeat(i % 3 ? 10 : 100 * 1024) }, 'mixed');`,
  );
  expect(lines.map((line) => [line.i, (line.text as string).length])).toEqual(
    Array.from({ length: 30 }, (_, i) => [i, i % 3 ? 10 : 100 * 1024]),
  );
  expect(lines.every((line, i) => (line.text as string)[0] === (i % 2 ? 'ü' : 'x'))).toBe(true);
});

test('a reader that stalls for a second loses no line and gets them in order', async () => {
  // 40 bursts of 500 lines, 10 ms apart: far more than a pipe holds while nobody reads.
  const lines = await withLogger(
    `let burst = 0; const timer = setInterval(() => { for (let j = 0; j < 500; j++) log.info({ i: burst * 500 + j }, 'burst'); if (++burst === 40) clearInterval(timer); }, 10);`,
    undefined,
    1000,
  );
  expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
});
