import { Client } from 'pg';
import type { Logger } from 'pino';

/** Postgres channel on which a revocation is announced, with the key's id as payload. */
export const API_KEY_REVOKED_CHANNEL = 'shipyard_api_key_revoked';
const TTL_MS = 5 * 60 * 1000;
const RECONNECT_MS = 1_000;

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
  private client?: Client;
  private listening = false;
  private closed = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  get(tokenSha256: string): CachedApiKey | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(tokenSha256);
    if (!entry) return undefined;
    if (Date.now() - entry.cachedAt > TTL_MS) {
      this.entries.delete(tokenSha256);
      return undefined;
    }
    return entry.key;
  }

  set(tokenSha256: string, key: CachedApiKey): void {
    if (this.listening) this.entries.set(tokenSha256, { key, cachedAt: Date.now() });
  }

  evictKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.key.keyId === keyId) this.entries.delete(hash);
  }

  /** Starts listening; resolves once LISTEN is in place (or failed, then it retries). */
  async start(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.databaseUrl });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel === API_KEY_REVOKED_CHANNEL && message.payload) this.evictKey(message.payload);
    });
    client.on('error', (err) => this.lost(err));
    client.on('end', () => this.lost(new Error('listener connection ended')));
    try {
      await client.connect();
      await client.query(`listen ${API_KEY_REVOKED_CHANNEL}`);
      this.listening = true;
    } catch (err) {
      this.lost(err as Error);
    }
  }

  private lost(err: Error): void {
    if (this.closed || !this.client) return;
    if (this.listening) this.logger.warn({ err }, 'api key revocation listener lost; cache disabled until it is back');
    this.listening = false;
    this.entries.clear();
    this.client.removeAllListeners();
    this.client.end().catch(() => undefined);
    this.client = undefined;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.start(), RECONNECT_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearTimeout(this.reconnectTimer);
    this.entries.clear();
    await this.client?.end().catch(() => undefined);
  }
}
