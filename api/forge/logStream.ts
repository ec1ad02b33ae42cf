import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Knex } from 'knex';
import { readRunProgress } from '../../core/forge/runLogStore';
import { isFinished } from '../../core/forge/runStore';
import { withTenant } from '../../db/tenancy';
import { admitStream } from '../http/eventStreams';
import type { RunLogFollowers } from './logFollowers';

/** Lines read per query while catching up; the socket's buffer paces the reads beyond that. */
const LINES_PER_READ = 500;

/** The stream a client follows: whose run, from after which line, until `closed` resolves. */
export interface FollowedLog {
  tenantId: string;
  /** Whose stream it is (an API key's creator for a key). */
  userId: string;
  runId: string;
  /** The last line the client has (0: none). */
  afterId: number;
  /** Resolves when the stream must end: its client left, or the process is stopping. */
  closed: Promise<void>;
  /** Open streams a tenant may hold in this process. */
  streamsPerTenant: number;
  /** Open streams one user may hold in this process. */
  streamsPerUser: number;
}

/**
 * Server-sent events of a run's log: every line after `afterId`, then new ones as they are
 * committed, and a final `end` event with the run's status once it has finished. Undefined
 * when the run is not there (or not the tenant's). The stream reads only when woken (a
 * notification that the run changed, see RunLogFollowers), each read a short transaction of its
 * own; it reads no more while the client's socket is not draining. Its first read, made before
 * it answers, is also the check that the run exists: it follows first, so nothing committed
 * after that read is missed.
 */
export async function openRunLogStream(
  db: Knex,
  followers: RunLogFollowers,
  { tenantId, userId, runId, afterId, closed, streamsPerTenant, streamsPerUser }: FollowedLog,
): Promise<PassThrough | undefined> {
  // Per tenant (SHIPYARD_FORGE_LOG_STREAMS_PER_TENANT) and per user (SHIPYARD_FORGE_LOG_STREAMS_PER_USER).
  const release = admitStream('log streams', [
    { key: `tenant:${tenantId}`, cap: streamsPerTenant, holder: 'tenant' },
    { key: `user:${tenantId}:${userId}`, cap: streamsPerUser, holder: 'user' },
  ]);
  const watch = followers.watch(runId, closed);
  const stop = () => {
    watch.unfollow();
    release();
  };
  // One statement, so one snapshot: lines read with a finished status are complete.
  const read = (after: number) => {
    watch.reading();
    return withTenant(db, tenantId, (trx) => readRunProgress(trx, runId, { afterId: after, limit: LINES_PER_READ }));
  };
  let progress: Awaited<ReturnType<typeof read>>;
  try {
    await followers.ready();
    progress = await read(afterId);
  } catch (err) {
    stop();
    throw err;
  }
  if (!progress.status) {
    stop();
    return undefined;
  }

  const stream = new PassThrough();
  const closedOrDrained = () => Promise.race([closed, once(stream, 'drain')]);
  const send = (event: string | null, id: number | null, data: unknown) =>
    stream.write(
      `${event ? `event: ${event}\n` : ''}${id !== null ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`,
    );

  // A comment first: it sends the response headers before there is a line to send.
  stream.write(`: following run ${runId}\n\n`);
  void (async () => {
    let lastId = afterId;
    try {
      while (watch.open) {
        for (const line of progress.lines) {
          lastId = line.id;
          if (!send(null, line.id, line)) await closedOrDrained();
          if (!watch.open) break;
        }
        if (!watch.open) break;
        // A full read means more to catch up on, read at once; anything less is all there is.
        if (progress.lines.length < LINES_PER_READ) {
          if (!progress.status || isFinished(progress.status)) {
            send('end', null, { status: progress.status ?? null });
            break;
          }
          await watch.nextChange();
          if (!watch.open) break;
        }
        progress = await read(lastId);
      }
    } catch (err) {
      send('error', null, { message: 'log stream failed' });
      stream.destroy(err as Error);
      return;
    } finally {
      stop();
    }
    stream.end();
  })();
  return stream;
}
