import { ApplicationFailure, log as activityLog } from '@temporalio/activity';
import { StringDecoder } from 'node:string_decoder';
import { scriptVariable } from '../../core/forge/template';
import { processSandbox, SandboxUnavailableError, type SandboxSettings } from '../../core/sandbox/sandbox';

export interface ScriptResult {
  exit_code: number;
  truncated: boolean;
}

/**
 * Output as log lines, written while the script runs: complete lines go to `write` as they
 * arrive (batched while a write is in flight, in order); the rest of a line waits for its end.
 * Bytes past `maxBytes` are dropped.
 */
function outputLines(maxBytes: number, write: (lines: string[]) => Promise<void>) {
  const decoder = new StringDecoder('utf8');
  let size = 0;
  let truncated = false;
  let partial = '';
  let queued: string[] = [];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  const flush = () => {
    writing = writing
      .then(() => {
        const batch = queued;
        queued = [];
        return batch.length ? write(batch) : undefined;
      })
      // Kept for `end`, so a failed write is reported there rather than left unhandled.
      .catch((err: unknown) => {
        failure ??= err;
      });
  };
  return {
    take(chunk: Buffer) {
      if (size + chunk.length > maxBytes) truncated = true;
      const kept = chunk.subarray(0, Math.max(0, maxBytes - size));
      size += kept.length;
      const text = partial + decoder.write(kept);
      const lines = text.split('\n');
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
      return { truncated };
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
 * Runs a script in the sandbox (core/sandbox) with a time limit and an output cap; its output
 * lines go to `log` as they come. Parameters reach it only as PARAM_<NAME> variables, never
 * pasted into its text, so a value stays data.
 */
export async function runScript(
  settings: SandboxSettings,
  spec: { script: string; timeoutSeconds: number; maxOutputBytes: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
  log: (lines: string[]) => Promise<void>,
): Promise<ScriptResult> {
  const output = outputLines(spec.maxOutputBytes, log);
  const sandbox = processSandbox(settings, { warn: (message) => activityLog.warn(message) });
  const result = await sandbox
    .run({
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
