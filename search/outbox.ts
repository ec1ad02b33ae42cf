import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ChangeListener } from '../db/notifications';
import { NotifiedLoop } from '../core/notifiedLoop';
import { statement } from '../db/statements';
import type { SearchEngine } from './client';
import type { OutboxCollection } from './collections';
import { INDEX_WRITER_LOCK, writeToIndex, type IndexChange, type OnRefused } from './bulk';
import { loadDocuments } from './documents';
import { ensureIndices } from './indices';

/** The NOTIFY channel the outbox trigger signals at each commit that added rows. */
export const OUTBOX_CHANNEL = 'search_outbox';

interface OutboxRow {
  id: string;
  collection: OutboxCollection;
  document_id: string;
}

const oldestOutboxRows = statement<OutboxRow, { batchSize: number }>((q, { batchSize }) =>
  q('search_outbox').select('id', 'collection', 'document_id').orderBy('id').limit(batchSize),
);

/**
 * Drains one batch of the outbox, oldest first: reads each named document's current row,
 * writes it (or deletes the document when its row is gone) with one `_bulk`, and deletes the
 * batch's rows once the engine has acknowledged every item. Several rows for one document
 * become one write of its latest state. A document the engine refuses for its content goes to
 * `onRefused` and its rows leave too: retried, it would block every write behind it, in every
 * tenant; its next change is tried afresh. Returns the rows drained: 0 when there were none, or
 * when another worker holds the writer lock.
 */
export async function drainOutboxBatch(
  system: Knex,
  engine: SearchEngine,
  batchSize: number,
  onRefused?: OnRefused,
): Promise<number> {
  return system.transaction(async (trx) => {
    const { rows: locks } = await trx.raw<{ rows: { locked: boolean }[] }>(
      'select pg_try_advisory_xact_lock(?) as locked',
      [INDEX_WRITER_LOCK],
    );
    if (!locks[0].locked) return 0;
    const rows = await oldestOutboxRows.rows(trx, { batchSize });
    if (rows.length === 0) return 0;

    const idsByCollection = new Map<OutboxCollection, Set<string>>();
    for (const { collection, document_id } of rows) {
      if (!idsByCollection.has(collection)) idsByCollection.set(collection, new Set());
      idsByCollection.get(collection)!.add(document_id);
    }
    const changes: IndexChange[] = [];
    for (const [collection, ids] of idsByCollection) {
      const documents = await loadDocuments(trx, collection, [...ids]);
      for (const id of ids) changes.push({ collection, id, document: documents.get(id) });
    }
    await writeToIndex(engine, changes, { onRefused });
    await trx.raw('delete from search_outbox where id = any(?::bigint[])', [rows.map((row) => row.id)]);
    return rows.length;
  });
}

export interface OutboxDrainOptions {
  batchSize: number;
  /** The longest a committed row waits when its notification was missed (listener down). */
  pollMs: number;
  /** Waits between attempts while the engine fails: doubling from half a second up to this. */
  maxBackoffMs: number;
}

export const DEFAULT_DRAIN_OPTIONS: OutboxDrainOptions = { batchSize: 500, pollMs: 1_000, maxBackoffMs: 15_000 };

/**
 * The search workers' loop: drains whenever a commit notifies (and every `pollMs` regardless),
 * batch after batch until the outbox is empty. While the engine fails it backs off and lets
 * the backlog grow; API writes never wait on it. Nothing is lost: rows leave only once indexed.
 */
export class OutboxDrain extends NotifiedLoop {
  private indicesReady = false;

  constructor(
    private readonly system: Knex,
    private readonly engine: SearchEngine,
    changes: ChangeListener,
    private readonly logger: Logger,
    private readonly options: OutboxDrainOptions = DEFAULT_DRAIN_OPTIONS,
  ) {
    super(changes, OUTBOX_CHANNEL);
  }

  protected async loop(): Promise<void> {
    let backoffMs = 0;
    while (!this.stopped) {
      try {
        if (!this.indicesReady) {
          await ensureIndices(this.engine);
          this.indicesReady = true;
        }
        const drained = await drainOutboxBatch(this.system, this.engine, this.options.batchSize, (refused) =>
          this.logger.warn({ refused }, 'the search engine refused documents: left out of the index'),
        );
        if (backoffMs) this.logger.info('search engine back: draining the outbox again');
        backoffMs = 0;
        if (drained === this.options.batchSize) continue;
      } catch (err) {
        if (!backoffMs) this.logger.warn({ err }, 'outbox drain failed: the backlog waits for the search engine');
        this.indicesReady = false; // the engine may come back empty (a wipe, a new cluster)
        backoffMs = Math.min(Math.max(backoffMs * 2, 500), this.options.maxBackoffMs);
      }
      // While backing off, commits do not cut the wait short: they would retry a failing engine.
      await this.pause.sleep(backoffMs || this.options.pollMs, backoffMs === 0);
    }
  }
}

/** A backlog older than this is reported as `stalled`: the drain cannot reach the engine. */
export const STALLED_AFTER_SECONDS = 60;

export interface OutboxBacklog {
  status: 'current' | 'indexing' | 'stalled';
  queue_size: number;
  oldest_pending_seconds: number | null;
}

/**
 * The outbox's backlog as `db` sees it: in a tenant's transaction, that tenant's rows alone
 * (row-level security scopes them); through the system role, every tenant's.
 */
export async function outboxBacklog(db: Knex): Promise<OutboxBacklog> {
  const { rows } = await db.raw<{ rows: { queue_size: number; oldest: number | null }[] }>(
    `select count(*)::int as queue_size, extract(epoch from now() - min(created_at))::float8 as oldest
       from search_outbox`,
  );
  const { queue_size, oldest } = rows[0];
  const oldest_pending_seconds = oldest === null ? null : Math.max(0, Math.round(oldest * 10) / 10);
  const status =
    queue_size === 0 ? 'current' : (oldest_pending_seconds ?? 0) > STALLED_AFTER_SECONDS ? 'stalled' : 'indexing';
  return { status, queue_size, oldest_pending_seconds };
}
