import { ApplicationFailure } from '@temporalio/activity';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderTemplate } from './template';

export interface ScriptResult {
  exit_code: number;
  output: string;
  truncated: boolean;
}

/**
 * Runs a script with /bin/sh in a scratch folder, with a time limit and an output cap. The
 * child sees only a minimal environment: none of the worker's secrets (database URLs, tokens).
 * Parameters are passed as PARAM_<NAME> variables as well as through templating.
 */
export async function runScript(
  spec: { script: string; timeoutSeconds: number; maxOutputBytes: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ScriptResult> {
  const workdir = await mkdtemp(path.join(tmpdir(), 'forge-script-'));
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: workdir, LANG: 'C.UTF-8' };
  for (const [name, value] of Object.entries(parameters)) {
    env[`PARAM_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  try {
    return await new Promise<ScriptResult>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', String(renderTemplate(spec.script, parameters))], {
        cwd: workdir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // own process group, so a kill reaches its children too
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const collect = (chunk: Buffer) => {
        if (size >= spec.maxOutputBytes) {
          truncated = true;
          return;
        }
        chunks.push(chunk.subarray(0, spec.maxOutputBytes - size));
        size += chunk.length;
        if (size > spec.maxOutputBytes) truncated = true;
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, spec.timeoutSeconds * 1000);
      signal.addEventListener('abort', kill, { once: true });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', kill);
        const output = Buffer.concat(chunks).toString('utf8');
        if (signal.aborted) return reject(signal.reason ?? new Error('cancelled'));
        if (timedOut) return reject(ApplicationFailure.nonRetryable(`script exceeded its ${spec.timeoutSeconds}s limit`, 'Timeout', { output }));
        if (code !== 0) return reject(ApplicationFailure.nonRetryable(`script exited with code ${code}`, 'ScriptFailed', { output }));
        resolve({ exit_code: 0, output, truncated });
      });
    });
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}
