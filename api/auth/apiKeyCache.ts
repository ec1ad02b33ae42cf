import { API_KEY_REVOKED_CHANNEL } from '../../core/apiKeys/store';
import { notifiedCache, type ChangeSource, type Clock, type VersionedCache } from '../http/versionedCache';

const TTL_MS = 5 * 60 * 1000;

export interface CachedApiKey {
  keyId: string;
  tenantId: string;
  userId: string;
  scopes: string[];
  expiresAt: Date | null;
}

/** Keyed by the token's SHA-256. */
export type ApiKeyCache = VersionedCache<CachedApiKey>;

/**
 * Successful API-key validations for 5 minutes (bcrypt at cost 12 is far too slow to run per
 * request). Every API process listens for revocations and drops the key. A request can still
 * reach a process before the notification does: what makes a revoked key fail on the very next
 * request anywhere is the check its transaction opens with (Authenticator.precondition); the
 * notification spares later requests that failed transaction. A revocation or a lost
 * listener also keeps a validation that was under way (lookup and bcrypt take ~250 ms) from
 * being cached: the key is unknown until its bcrypt ends, so a revocation bumps the cache's
 * epoch (revocations are rare). While the listener is disconnected the cache serves nothing.
 */
export function createApiKeyCache(changes: ChangeSource, now: Clock = Date.now): ApiKeyCache {
  return notifiedCache<CachedApiKey>(changes, {
    ttlMs: TTL_MS,
    now,
    name: 'api_key',
    channel: API_KEY_REVOKED_CHANNEL,
    onChange: (cache, keyId) => cache.evictWhere((key) => key.keyId === keyId),
  });
}
