import type { Knex } from 'knex';
import { notifiedCache, type ChangeSource, type Clock, type VersionedCache } from '../http/versionedCache';
import type { TeamListItem } from '../../core/teams/store';

/** The spec's /teams cache lifetime. */
export const TEAMS_CACHE_TTL_MS = 3 * 60 * 1000;
/** Postgres channel on which a team write is announced, with the tenant id as payload. */
export const TEAMS_CHANGED_CHANNEL = 'shipyard_teams_changed';

/** Keyed by tenant id. */
export type TeamsCache = VersionedCache<TeamListItem[]>;

/** This process's /teams cache, dropped by a team write in any API process. */
export function createTeamsCache(changes: ChangeSource, now: Clock = Date.now): TeamsCache {
  return notifiedCache<TeamListItem[]>(changes, {
    ttlMs: TEAMS_CACHE_TTL_MS,
    now,
    name: 'teams',
    channel: TEAMS_CHANGED_CHANNEL,
    onChange: (cache, tenantId) => cache.invalidate(tenantId),
  });
}

/**
 * Call on every team write. Drops the tenant's list here now (this request's own later reads)
 * and again once the transaction has ended, so a list read concurrently from pre-commit data
 * cannot outlive the commit; the notification, delivered at commit, drops it in every process.
 */
export async function dropTeamsCache(cache: TeamsCache, trx: Knex.Transaction, tenantId: string): Promise<void> {
  cache.invalidate(tenantId);
  trx.executionPromise
    ?.finally(() => cache.invalidate(tenantId))
    .catch(() => {
      // A rollback: the request's own error handling reports it.
    });
  await trx.raw('select pg_notify(?, ?)', [TEAMS_CHANGED_CHANNEL, tenantId]);
}
