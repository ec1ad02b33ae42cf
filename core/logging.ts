import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';
import { LineDestination } from './logDestination';

/** A process's JSON logger (the API's, a worker's), named after the process. */
export function createLogger(config: Pick<Config, 'logLevel'>, name: string): Logger {
  return pino(
    {
      name,
      level: config.logLevel,
      // Never let a credential reach the logs, whatever object gets logged.
      redact: ['req.headers.authorization', '*.token', '*.password', '*.secret'],
    },
    // Written asynchronously in chunks of 16 KiB, and at least every half second when traffic
    // is light: a write(2) for every few lines cost the cached-key request ~7% of its
    // throughput, in this process and the one reading the pipe. What is pending is written
    // synchronously when the process exits; a killed process (SIGKILL) loses at most the last
    // half second of lines.
    new LineDestination(1),
  );
}

/** pino's state of a logger, by the symbols pino exports for reading it. */
const internalsOf = (logger: Logger) => logger as unknown as Record<symbol, unknown>;

/** Where `logger` writes its lines. */
const destinationOf = (logger: Logger) => internalsOf(logger)[pino.symbols.streamSym] as DestinationStream;

/** Fields already serialized as JSON members: `"key":value` pairs joined by commas. */
export type JsonMembers = string;

/**
 * Writes info lines of `logger` with the message `msg` and fields the caller serialized itself,
 * straight to its destination: the same line pino would write (level, time, the logger's
 * bindings, the fields, the message), without pino's walk over an object (a type test, an
 * escape scan and a concatenation per field) or its redaction. For the line every request
 * writes, whose fields are ours and never a credential.
 */
export function preformattedInfo(logger: Logger, msg: string): (fields: JsonMembers) => void {
  const internals = internalsOf(logger);
  const stream = destinationOf(logger);
  const time = internals[pino.symbols.timeSym] as () => string;
  const head = `{"level":${logger.levels.values.info}`;
  const bindings = `${internals[pino.symbols.chindingsSym] as string},`;
  const tail = `,"msg":${JSON.stringify(msg)}}\n`;
  return (fields) => {
    if (logger.isLevelEnabled('info')) stream.write(head + time() + bindings + fields + tail);
  };
}

/** Lines `logger`'s destination dropped because its reader fell behind; 0 on another destination. */
export function droppedLogLines(logger: Logger): number {
  const stream = destinationOf(logger);
  return stream instanceof LineDestination ? stream.dropped : 0;
}
