import pino, { type Logger } from 'pino';
import type { Config } from './config';

/** A process's JSON logger (the API's, a worker's), named after the process. */
export function createLogger(config: Config, name: string): Logger {
  return pino(
    {
      name,
      level: config.logLevel,
      // Never let a credential reach the logs, whatever object gets logged.
      redact: ['req.headers.authorization', '*.token', '*.password', '*.secret'],
    },
    // Written asynchronously in batches of at least 4 KiB (pino's own advice for throughput),
    // and at least every half second when traffic is light: a write(2) for every few lines cost
    // the cached-key request ~7% of its throughput, in this process and the one reading the
    // pipe. What is pending is written synchronously when the process exits; a killed process
    // (SIGKILL) loses at most the last half second of lines.
    pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 500 }),
  );
}
