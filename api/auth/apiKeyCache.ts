import type { ChangeListener } from '../../db/notifications';

/** Postgres channel on which a revocation is announced, with the key's id as payload. */
export const API_KEY_REVOKED_CHANNEL = 'shipyard_api_key_revoked';
const TTL_MS = 5 * 60 * 1000;

export interface CachedApiKey {
  keyId: string;
  tenantId: string;
  userId: string;
  scopes: string[];
  expiresAt: Date | null;
}

/**
 * Successful API-key validations for 5 minutes, keyed by the token's SHA-256 (bcrypt at cost 12
 * is far too slow to run per request). Every API process listens for revocations, so a revoked
 * key fails on the very next request in every process. While the listener is disconnected the
 * cache serves nothing: correctness over speed.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: CachedApiKey; cachedAt: number }>();

  constructor(private readonly changes: ChangeListener) {
    changes.on(API_KEY_REVOKED_CHANNEL, (keyId) => this.evictKey(keyId));
    changes.onLost(() => this.entries.clear());
  }

  get(tokenSha256: string): CachedApiKey | undefined {
    if (!this.changes.listening) return undefined;
    const entry = this.entries.get(tokenSha256);
    if (!entry) return undefined;
    if (Date.now() - entry.cachedAt > TTL_MS) {
      this.entries.delete(tokenSha256);
      return undefined;
    }
    return entry.key;
  }

  set(tokenSha256: string, key: CachedApiKey): void {
    if (this.changes.listening) this.entries.set(tokenSha256, { key, cachedAt: Date.now() });
  }

  private evictKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.key.keyId === keyId) this.entries.delete(hash);
  }
}
