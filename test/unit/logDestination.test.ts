import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LineDestination } from '../../core/logDestination';

// A non-blocking pipe whose reader starts late: the destination's writes meet a full pipe
// (EAGAIN) and partial writes, the paths a blocking stdout never takes.
test('lines written into a full non-blocking pipe all arrive, in order', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'shipyard-log-'));
  const fifo = path.join(dir, 'lines');
  execFileSync('mkfifo', [fifo]);
  // The reading end first: a non-blocking open for writing fails while a FIFO has no reader.
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    const destination = new LineDestination(writeFd, { chunkBytes: 4096, lingerMs: 5, maxPendingChars: 1 << 26 });
    // ~1 MB against a pipe of 64 KiB, in bursts, while nobody reads.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = burst * 1000; i < (burst + 1) * 1000; i++)
        destination.write(`{"i":${i},"pad":"${'x'.repeat(i % 40)}"}\n`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const received: number[] = [];
    let partial = '';
    const reader = new Socket({ fd: readFd, readable: true, writable: false });
    reader.setEncoding('utf8');
    await new Promise<void>((resolve) => {
      reader.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) received.push((JSON.parse(line) as { i: number }).i);
        if (received.length === 20000) resolve();
      });
    });
    reader.destroy();
    expect(received).toEqual(Array.from({ length: 20000 }, (_, i) => i));
    expect(destination.dropped).toBe(0);
  } finally {
    closeSync(writeFd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('lines beyond the pending limit are dropped and counted, not queued', () => {
  // Left open: the destination writes what is pending to its descriptor when the process exits.
  const fd = openSync('/dev/null', 'w');
  const destination = new LineDestination(fd, { chunkBytes: 1 << 20, lingerMs: 60_000, maxPendingChars: 100 });
  expect([destination.write('a'.repeat(60)), destination.write('b'.repeat(60))]).toEqual([true, false]);
  expect(destination.dropped).toBe(1);
});
