import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BackupConfig } from '../core/config';
import type { DumpResult } from '../core/database/types';

/** Where Debian installs each PostgreSQL major's programs (as scripts/lib/postgres.sh finds them). */
const DEBIAN_POSTGRES = '/usr/lib/postgresql';
/** What is kept of pg_dump's error output for the backup's record: its last lines. */
const STDERR_KEPT_BYTES = 2_000;

/** The configured pg_dump, else the newest Debian major's, else the one on PATH. */
export async function locatePgDump(configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const majors = await readdir(DEBIAN_POSTGRES).catch(() => [] as string[]);
  for (const major of majors.filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))) {
    const binary = path.join(DEBIAN_POSTGRES, major, 'bin', 'pg_dump');
    if (
      await access(binary).then(
        () => true,
        () => false,
      )
    )
      return binary;
  }
  return 'pg_dump';
}

/**
 * libpq's environment for a connection URL. The password travels in PGPASSWORD, never in argv
 * (which `ps` shows to every user of the machine) nor in a log line.
 */
export function libpqEnvironment(databaseUrl: string): Record<string, string> {
  const url = new URL(databaseUrl);
  const env: Record<string, string> = {
    PGHOST: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    PGPORT: url.port || '5432',
    PGUSER: decodeURIComponent(url.username),
    PGDATABASE: decodeURIComponent(url.pathname.slice(1)),
    PGAPPNAME: 'shipyard-backup',
    PGCONNECT_TIMEOUT: '10',
  };
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  const sslMode = url.searchParams.get('sslmode');
  if (sslMode) env.PGSSLMODE = sslMode;
  return env;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * Dumps the database (custom format: compressed, restorable table by table with pg_restore) into
 * `<dir>/<fileName>`, calling `heartbeat` every few seconds while it runs. A failed dump leaves no
 * file and throws with pg_dump's own last words; `signal` (the activity's cancellation) stops it.
 */
export async function runPgDump(
  config: BackupConfig,
  fileName: string,
  { heartbeat, signal }: { heartbeat: () => void; signal: AbortSignal },
): Promise<DumpResult> {
  await mkdir(config.dir, { recursive: true, mode: 0o700 });
  const file = path.join(config.dir, fileName);
  const started = Date.now();
  const beat = setInterval(heartbeat, 5_000);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        // `--file` is ours; the connection comes from the environment alone.
        config.pgDump ?? 'pg_dump',
        ['--format=custom', '--no-password', `--file=${file}`],
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...libpqEnvironment(config.databaseUrl) },
          stdio: ['ignore', 'ignore', 'pipe'],
          signal,
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_KEPT_BYTES);
      });
      child.on('error', reject);
      child.on('close', (code, killedBy) => {
        if (code === 0) resolve();
        else reject(new Error(`pg_dump failed (${killedBy ?? `exit ${code}`}): ${stderr.trim() || 'no output'}`));
      });
    });
    const [{ size }, sha256] = await Promise.all([stat(file), sha256Of(file)]);
    return { size_bytes: size, sha256, duration_ms: Date.now() - started };
  } catch (err) {
    await rm(file, { force: true });
    throw err;
  } finally {
    clearInterval(beat);
  }
}
