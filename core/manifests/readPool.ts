import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { InputLimits } from '../limitsConfig';
import { ApiError, rateLimited } from '../errors';
import { KeyedGate } from '../keyedGate';
import type { ReadRefusal, ReadResult, ReadTask } from './readWorker';

// YAML is read on a pool of worker threads: a hostile stream costs a parser thread its time
// limit, never the event loop that answers every other request. Created once per process
// (api/deps.ts) and closed at shutdown.

export interface ManifestReader {
  /**
   * The documents of `content` (and what `task.with` asks for); an ApiError for content refused
   * as a whole. A tenant's reads take turns, one at a time, so its flood of slow streams holds
   * one parser thread, not all of them.
   */
  read(tenantId: string, task: Omit<ReadTask, 'limits'>): Promise<ReadResult>;
  close(): Promise<void>;
}

/**
 * Under tsx or jest the worker is TypeScript and needs tsx's loader (by its path: a bare `tsx`
 * resolves from the working directory); built, it is the .js beside this file.
 */
function workerFile(): { filename: string; execArgv: string[] } {
  const extension = path.extname(__filename);
  return {
    filename: path.join(__dirname, `readWorker${extension}`),
    execArgv: extension === '.ts' ? ['--import', pathToFileURL(require.resolve('tsx')).href] : [],
  };
}

const isAbort = (err: unknown) => (err as { name?: string } | null)?.name === 'AbortError';

export function createManifestReader(limits: InputLimits): ManifestReader {
  const pool = new Piscina<ReadTask, ReadResult | ReadRefusal>({
    ...workerFile(),
    // No thread waits while no YAML is read: an idle one holds ~25 MB of the API's memory, and
    // starting one for the first read after a quiet minute takes tens of milliseconds.
    minThreads: 0,
    maxThreads: limits.parseThreads,
    idleTimeout: 60_000,
  });
  const { documents, nodes, keysPerMap, notesPerDocument, parseTimeoutMs } = limits;
  const turns = new KeyedGate(1);
  return {
    async read(tenantId, task) {
      const release = await turns.enter(tenantId, parseTimeoutMs);
      if (!release) {
        throw rateLimited("This tenant's YAML is read one request at a time; retry shortly", 1);
      }
      let answer: ReadResult | ReadRefusal;
      try {
        // Aborting a running task terminates its thread; the pool starts a fresh one.
        answer = await pool.run(
          { ...task, limits: { documents, nodes, keysPerMap, notesPerDocument } },
          { signal: AbortSignal.timeout(parseTimeoutMs) },
        );
      } catch (err) {
        if (!isAbort(err)) throw err;
        throw new ApiError(
          'PAYLOAD_TOO_LARGE',
          `Reading the YAML took longer than ${parseTimeoutMs} ms (SHIPYARD_MANIFEST_PARSE_TIMEOUT_MS)`,
          [{ field: 'body.content', message: `must be read within ${parseTimeoutMs} ms` }],
        );
      } finally {
        release();
      }
      if ('refused' in answer) throw new ApiError(answer.refused.code, answer.refused.message, answer.refused.details);
      return answer;
    },
    close: () => pool.destroy(),
  };
}
