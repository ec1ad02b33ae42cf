import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

// Real entry points as separate processes, as `npm start` and the containers run them.
export const ROOT = path.join(__dirname, '..', '..');

/**
 * Runs an entry point (with the test environment) and relays its stderr (unless the test reads
 * it itself); its stdout is piped only for a test that reads it. TypeScript through tsx,
 * compiled JavaScript with plain node. Node loads tsx in-process: the `tsx` binary would fork a
 * second process that a SIGKILL leaves running.
 */
export function launch(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
  { relay = true, stdout = false }: { relay?: boolean; stdout?: boolean } = {},
): ChildProcess {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...loader, script, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', stdout ? 'pipe' : 'ignore', 'pipe'],
  });
  if (relay) child.stderr?.on('data', (chunk) => process.stderr.write(chunk));
  return child;
}

/** Polls `attempt` until it yields a value, or fails after `seconds`. */
export async function until<T>(what: string, seconds: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} not reached within ${seconds}s`);
}

/** Sends a signal and resolves with the exit code once the process is gone. */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill(signal);
  const [code] = await exited;
  return code as number | null;
}

/**
 * Host pids of the processes whose environment holds `variable` (NAME=value): how a test finds
 * a sandboxed script's processes, whose own `$$` is a pid inside the sandbox.
 */
export function processesCarrying(variable: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(variable);
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    })
    .map(Number);
}

/** A TCP port free on 127.0.0.1 at the time of asking, for a server a test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
