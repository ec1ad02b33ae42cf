/**
 * The search collections the outbox feeds (db/migrations/…_repositories.ts keeps the same list
 * in its check constraint): their documents are derived from database rows.
 */
export const OUTBOX_COLLECTIONS = ['entities', 'repositories', 'molds', 'users', 'teams'] as const;
export type OutboxCollection = (typeof OUTBOX_COLLECTIONS)[number];

/**
 * Every collection /search spans, each with one index behind an alias. `docs` (documentation
 * files) is written by the crawler and lives only in the engine (spec, data ownership rule 2).
 */
export const SEARCH_COLLECTIONS = [...OUTBOX_COLLECTIONS, 'docs'] as const;
export type SearchCollection = (typeof SEARCH_COLLECTIONS)[number];
