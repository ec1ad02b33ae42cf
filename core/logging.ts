import pino, { type Logger } from 'pino';
import type { Config } from './config';

/** Log lines dropped by each logger's destination, for the metric of that name. */
const droppedBy = new WeakMap<Logger, () => number>();

/** Each logger's destination, for flushLog. */
const destinations = new WeakMap<Logger, SonicBoom>();

/** A pino destination (sonic-boom), as pino.destination builds it. */
type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * The destination of a process's log: stdout, written asynchronously in chunks of 8 KiB and at
 * least every half second when traffic is light (a write(2) for every few lines cost the busy
 * API throughput). pino writes what is pending synchronously when the process exits. A reader
 * that falls behind by more than 64 MiB loses the lines past that, counted as dropped.
 */
const stdoutDestination = (): SonicBoom =>
  pino.destination({ dest: 1, sync: false, minLength: 8 * 1024, periodicFlush: 500, maxLength: 64 * 1024 * 1024 });

/** A process's JSON logger (the API's, a worker's), named after the process. */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  name: string,
  destination: SonicBoom = stdoutDestination(),
): Logger {
  const logger = pino(
    {
      name,
      level: config.logLevel,
      // Never let a credential reach the logs, whatever object gets logged.
      redact: ['req.headers.authorization', '*.token', '*.password', '*.secret'],
    },
    destination,
  );
  let dropped = 0;
  destination.on('drop', () => dropped++);
  droppedBy.set(logger, () => dropped);
  destinations.set(logger, destination);
  return logger;
}

/**
 * Writes out the lines `logger` still holds, asynchronously and for at most `withinMs`: what a
 * process does last before it exits. Left to pino's synchronous flush at exit, a reader that has
 * gone away (EPIPE) makes sonic-boom 4 retry that write forever, so the process never exits; an
 * asynchronous write's EPIPE instead makes pino stop writing to the destination.
 */
export async function flushLog(logger: Logger, withinMs = 1_000): Promise<void> {
  const destination = destinations.get(logger);
  if (!destination) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, withinMs);
    destination.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Lines `logger`'s destination dropped because its reader fell behind; 0 for a logger createLogger did not make. */
export const droppedLogLines = (logger: Logger): number => droppedBy.get(logger)?.() ?? 0;
