import { ApplicationFailure } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { renderTemplate } from '../../api/forge/template';

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

/**
 * Runs a script with /bin/sh in a scratch folder, with a time limit and an output cap; its
 * output lines go to `log` as they come. The child sees only a minimal environment: none of
 * the worker's secrets (database URLs, tokens). Parameters are passed as PARAM_<NAME> variables
 * as well as through templating. coreutils `timeout` enforces the limit, so a script orphaned
 * by a worker that died still dies on time.
 */
export async function runScript(
  spec: { script: string; timeoutSeconds: number; maxOutputBytes: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
  log: (lines: string[]) => Promise<void>,
): Promise<ScriptResult> {
  const workdir = await mkdtemp(path.join(tmpdir(), 'forge-script-'));
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: workdir, LANG: 'C.UTF-8' };
  for (const [name, value] of Object.entries(parameters)) {
    env[`PARAM_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  try {
    const output = outputLines(spec.maxOutputBytes, log);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const child = spawn('timeout', ['-s', 'KILL', `${spec.timeoutSeconds}s`, '/bin/sh', '-c', String(renderTemplate(spec.script, parameters))], {
        cwd: workdir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // own process group, so a kill reaches its children too
      });
      child.stdout.on('data', output.take);
      child.stderr.on('data', output.take);
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      signal.addEventListener('abort', kill, { once: true });
      child.on('error', reject);
      child.on('close', (code, killedBy) => {
        signal.removeEventListener('abort', kill);
        resolve({ code, signal: killedBy });
      });
    });
    const { truncated } = await output.end();
    if (signal.aborted) throw signal.reason ?? new Error('cancelled');
    // `timeout -s KILL` kills its whole process group, itself included.
    if (exit.signal === 'SIGKILL') throw ApplicationFailure.nonRetryable(`script exceeded its ${spec.timeoutSeconds}s limit`, 'Timeout');
    if (exit.code !== 0) throw ApplicationFailure.nonRetryable(`script ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`}`, 'ScriptFailed');
    return { exit_code: 0, truncated };
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}
