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
    // Written asynchronously: under load the lines queued during one write leave together in
    // the next, instead of one write(2) each on the event loop. What is pending is flushed
    // synchronously when the process exits.
    pino.destination({ dest: 1, sync: false }),
  );
}
