import type { UserPrincipal } from '../../core/auth/principal';
import { ACCESS_CHANGED_CHANNEL } from '../../core/auth/store';
import type { SessionClaims } from '../../core/auth/sessionTokens';
import { notifiedCache, type ChangeSource, type Clock, type VersionedCache } from '../http/versionedCache';

/**
 * As long as a sign-in refresh is spaced (core/auth/store.ts upsertSessionUser), so an active
 * user's last_login still moves about once a minute.
 */
const TTL_MS = 60_000;

/** A signed-in user's principal, less what each token carries for itself. */
export type CachedUserPrincipal = Omit<UserPrincipal, 'expiresAt'>;

/** Keyed by `sessionPrincipalKey` of the claims. */
export type SessionPrincipalCache = VersionedCache<CachedUserPrincipal>;

/**
 * The claims a principal is built from, as one key: a token renewed with the same claims finds
 * the entry, and a changed email, name or group list loads (and upserts the user) again.
 */
export const sessionPrincipalKey = (claims: SessionClaims): string =>
  JSON.stringify([
    claims.tenantId,
    claims.subject,
    claims.email,
    claims.emailVerified,
    claims.name,
    [...claims.groups].sort(),
  ]);

/**
 * Who a session's user is and what they may do, for a minute, so a signed-in request reads no
 * user or role rows. Any change to role assignments, teams' members and roles, group mappings,
 * bundles or a user's identity announces its tenant (database triggers), and every API process
 * drops that tenant's principals when the notification arrives, a few milliseconds after the
 * commit. While the listener is down the cache serves nothing.
 */
export function createSessionPrincipalCache(changes: ChangeSource, now: Clock = Date.now): SessionPrincipalCache {
  return notifiedCache<CachedUserPrincipal>(changes, {
    ttlMs: TTL_MS,
    now,
    name: 'session_principal',
    channel: ACCESS_CHANGED_CHANNEL,
    onChange: (cache, tenantId) => cache.evictWhere((principal) => principal.tenantId === tenantId),
  });
}
