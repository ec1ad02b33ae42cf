import { PassThrough } from 'node:stream';
import type { Knex } from 'knex';
import { withTenant } from '../../db/tenancy';
import { isFinished, listLogs, runStatus } from '../../core/forge/runStore';

const POLL_MS = 500;

/**
 * Server-sent events of a run's log: every line so far, then new ones as they are written, and
 * a final `end` event with the run's status once it has finished. Each poll is its own short
 * transaction, so a long stream holds no database connection between polls.
 */
export function streamRunLogs(db: Knex, tenantId: string, runId: string, closed: Promise<void>): PassThrough {
  const stream = new PassThrough();
  let open = true;
  void closed.then(() => {
    open = false;
  });
  const send = (event: string | null, id: number | null, data: unknown) =>
    stream.write(
      `${event ? `event: ${event}\n` : ''}${id !== null ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`,
    );

  void (async () => {
    let lastId = 0;
    try {
      while (open) {
        // Status first: a run's lines are committed before it is marked finished, so lines read
        // after seeing "finished" are complete.
        const { status, lines } = await withTenant(db, tenantId, async (trx) => {
          const current = await runStatus(trx, runId);
          return { status: current, lines: await listLogs(trx, runId, lastId) };
        });
        for (const line of lines) {
          send(null, line.id, line);
          lastId = line.id;
        }
        if (!status || isFinished(status)) {
          send('end', null, { status: status ?? null });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } catch (err) {
      send('error', null, { message: 'log stream failed' });
      stream.destroy(err as Error);
      return;
    }
    stream.end();
  })();
  return stream;
}
