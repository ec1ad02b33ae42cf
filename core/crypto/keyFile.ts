import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A local development key kept in a file: read, or created on first use (mode 0600) from what
 * `generate` returns. Processes starting together (the API and the workers) may all find it
 * missing: each writes its own candidate to a private file opened with `wx`, then links it into
 * place, which fails for all but the first; every one then reads the winner's key. Linking a
 * complete file means no process ever reads one still being written.
 */
export function readOrCreateKeyFile(file: string, generate: () => string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const candidate = `${file}.${randomUUID()}`;
  writeFileSync(candidate, generate(), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(candidate, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(candidate);
  }
  return readFileSync(file, 'utf8');
}
