import type { estypes } from '@elastic/elasticsearch';
import type { SearchEngine } from './client';
import type { SearchCollection } from './collections';
import type { SearchDocument } from './documents';
import { aliasOf } from './indices';

// One writer at a time: a drain or a backfill batch reads documents' current rows and writes
// them, so two writers could land an older read after a newer one. Whoever holds this
// transaction-level advisory lock writes to the index (key: an arbitrary constant).
export const INDEX_WRITER_LOCK = 7_305_114_017;

/** The engine could not take part of a bulk request for now: the caller keeps its rows and tries again. */
export class BulkRejected extends Error {}

/** A document to write; without one, the id's document is deleted. */
export interface IndexChange {
  collection: SearchCollection;
  id: string;
  document?: SearchDocument;
}

/**
 * A document the engine refused for what it holds (a 400: it does not fit the mapping). Sent
 * again unchanged it would be refused again, so it must not hold back the writes behind it.
 */
export interface RefusedDocument {
  collection: SearchCollection;
  id: string;
  /** The engine's error type and reason, cut short: they may quote the refused value. */
  reason: string;
}

/** Hears of refused documents: a writer logs them; what it wrote besides stands. */
export type OnRefused = (refused: RefusedDocument[]) => void;

const REASON_CHARS = 300;

/**
 * Writes the changes with one `_bulk` and resolves once the engine has acknowledged every item,
 * with the documents it refused for their content (told to `onRefused` too). Any other failure
 * of an item (the engine overloaded, an index missing after a wipe) throws BulkRejected: nothing
 * counts as written. A delete of a document the engine never had counts as done. Writes go
 * through each collection's alias, unless `index` names the one index they all go to (a
 * reindex's fill).
 */
export async function writeToIndex(
  engine: SearchEngine,
  changes: IndexChange[],
  { index, onRefused }: { index?: string; onRefused?: OnRefused } = {},
): Promise<RefusedDocument[]> {
  if (changes.length === 0) return [];
  const operations: (estypes.BulkOperationContainer | SearchDocument)[] = [];
  for (const { collection, id, document } of changes) {
    const target = { _index: index ?? aliasOf(engine, collection), _id: id };
    if (document) operations.push({ index: target }, document);
    else operations.push({ delete: target });
  }
  // Only through an alias: after a wipe of the indices, a write must fail (and the writer create
  // the index with its mappings) rather than have the engine create one with guessed mappings.
  const response = await engine.client.bulk({ operations, require_alias: index === undefined });
  const refused: RefusedDocument[] = [];
  response.items.forEach((item, i) => {
    const [action, result] = Object.entries(item)[0];
    if (!result.error || (action === 'delete' && result.status === 404)) return;
    if (result.status !== 400)
      throw new BulkRejected(`the engine could not take a document: ${JSON.stringify(result.error)}`);
    const { type, reason } = result.error;
    refused.push({
      collection: changes[i].collection,
      id: changes[i].id,
      reason: `${type}: ${reason ?? ''}`.slice(0, REASON_CHARS),
    });
  });
  if (refused.length) onRefused?.(refused);
  return refused;
}
