import { ApplicationFailure, log as activityLog } from '@temporalio/activity';
import { StringDecoder } from 'node:string_decoder';
import { scriptVariable } from '../../core/forge/template';
import { processSandbox, SandboxUnavailableError, type SandboxSettings } from '../../core/sandbox/sandbox';

export interface ScriptResult {
  exit_code: number;
  truncated: boolean;
}

/** Where a script's output goes: its lines (under the run's cap; answers how many were stored), and notices. */
export interface ScriptLog {
  output(lines: string[]): Promise<number>;
  notice(line: string): Promise<unknown>;
}

const NEWLINE = 0x0a;

/**
 * Output as log lines, written while the script runs: complete lines go to `log.output` as they
 * arrive (batched while a write is in flight, in order); the rest of a line waits for its end.
 * Past the step's caps in bytes or lines, or once the run's log is full, output is still read
 * (the script never blocks on a full pipe) but only counted; `end` then adds one line saying
 * how much was not stored.
 */
function outputLines(caps: { maxBytes: number; maxLines: number }, log: ScriptLog) {
  const decoder = new StringDecoder('utf8');
  let keptBytes = 0;
  let keptLines = 0;
  // The cap that ended the storing, in words, and the one that first dropped output: a cap met
  // exactly ends the storing but drops nothing.
  let stoppedBy: string | undefined;
  let droppedBy: string | undefined;
  const dropped = { bytes: 0, newlines: 0, endsMidLine: false };
  let partial = '';
  let queued: string[] = [];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  const drop = (data: Buffer, cap: string) => {
    if (!data.length) return;
    droppedBy ??= cap;
    dropped.bytes += data.length;
    for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, i + 1)) dropped.newlines++;
    dropped.endsMidLine = data[data.length - 1] !== NEWLINE;
  };
  const flush = () => {
    writing = writing
      .then(async () => {
        const batch = queued;
        queued = [];
        if (!batch.length) return;
        const stored = await log.output(batch);
        if (stored < batch.length) {
          // The run's log is full: these lines, and all that follows, are counted instead.
          stoppedBy ??= "the run's cap";
          droppedBy ??= "the run's cap";
          for (const line of batch.slice(stored)) {
            dropped.bytes += Buffer.byteLength(line) + 1;
            dropped.newlines++;
          }
        }
      })
      // Kept for `end`, so a failed write is reported there rather than left unhandled.
      .catch((err: unknown) => {
        failure ??= err;
      });
  };
  return {
    take(chunk: Buffer) {
      if (stoppedBy) return drop(chunk, stoppedBy);
      let end = Math.min(chunk.length, caps.maxBytes - keptBytes);
      if (end < chunk.length) stoppedBy = `${caps.maxBytes} bytes`;
      // Kept up to the newline that ends the last line the step may store.
      for (let i = chunk.indexOf(NEWLINE); i !== -1 && i < end; i = chunk.indexOf(NEWLINE, i + 1)) {
        if (++keptLines === caps.maxLines) {
          end = i + 1;
          stoppedBy = `${caps.maxLines} lines`;
          break;
        }
      }
      drop(chunk.subarray(end), stoppedBy!);
      keptBytes += end;
      const lines = (partial + decoder.write(chunk.subarray(0, end))).split('\n');
      partial = lines.pop()!;
      if (lines.length) {
        queued.push(...lines);
        flush();
      }
    },
    async end(): Promise<{ truncated: boolean }> {
      const rest = partial + decoder.end();
      if (rest) queued.push(rest);
      flush();
      await writing;
      if (failure) throw failure;
      if (dropped.bytes) {
        const lines = dropped.newlines + (dropped.endsMidLine ? 1 : 0);
        const more = `${lines} more line${lines === 1 ? '' : 's'} (${dropped.bytes} bytes)`;
        await log.notice(`output truncated at ${droppedBy}: ${more} not stored`);
      }
      return { truncated: dropped.bytes > 0 };
    },
  };
}

/** Longest `NAME=value` Linux passes to a program (MAX_ARG_STRLEN): a longer one fails the exec. */
const MAX_VARIABLE_BYTES = 128 * 1024 - 1;

/** The parameters as the script's environment: PARAM_<NAME>, lists and objects as JSON. */
function scriptVariables(parameters: Record<string, unknown>): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters)) {
    const variable = scriptVariable(name);
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (Buffer.byteLength(`${variable}=${text}`) > MAX_VARIABLE_BYTES) {
      throw ApplicationFailure.nonRetryable(
        `parameter "${name}" is too large to reach a script as $${variable} (128 KiB at most)`,
        'ScriptFailed',
      );
    }
    variables[variable] = text;
  }
  return variables;
}

/**
 * Runs a script in the sandbox (core/sandbox) with a time limit and output caps (its
 * `maxOutputBytes`, the configured lines per step); its output lines go to `log` as they come.
 * Parameters reach it only as PARAM_<NAME> variables, never pasted into its text, so a value
 * stays data.
 */
export async function runScript(
  settings: SandboxSettings & { logLinesPerStep: number },
  spec: { tenantId: string; script: string; timeoutSeconds: number; maxOutputBytes: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
  log: ScriptLog,
): Promise<ScriptResult> {
  const output = outputLines({ maxBytes: spec.maxOutputBytes, maxLines: settings.logLinesPerStep }, log);
  const sandbox = processSandbox(settings, { warn: (message) => activityLog.warn(message) });
  const result = await sandbox
    .run({
      tenantId: spec.tenantId,
      script: spec.script,
      variables: scriptVariables(parameters),
      timeoutSeconds: spec.timeoutSeconds,
      onOutput: output.take,
      signal,
    })
    .catch((err: Error) => {
      throw err instanceof SandboxUnavailableError
        ? ApplicationFailure.nonRetryable(err.message, 'SandboxUnavailable')
        : ApplicationFailure.nonRetryable(`script could not start: ${err.message}`, 'ScriptFailed');
    });
  const { truncated } = await output.end();
  if (signal.aborted) throw signal.reason ?? new Error('cancelled');
  // The script's own failure (or a limit it hit) is final: only a lost worker is retried.
  if (result.problem) throw ApplicationFailure.nonRetryable(result.problem, 'ScriptFailed');
  return { exit_code: 0, truncated };
}
