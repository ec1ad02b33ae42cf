import { Client } from 'pg';
import type { Logger } from 'pino';

const RECONNECT_MS = 1_000;

/** Since when the LISTEN connection has been down, and its latest error. */
export interface ListenerOutage {
  since: Date;
  error: string;
}

/**
 * One LISTEN connection per process for Postgres notifications (NOTIFY is delivered at commit,
 * to every listening process). Caches use it to drop entries that another process made stale.
 * While the connection is down, `listening` is false, `outage` says since when and why, and
 * lost-handlers have run: a cache must then serve nothing, since it would miss invalidations. It
 * reconnects every second; the start and the end of each outage are logged once. After `close()`
 * it stays false.
 */
export class ChangeListener {
  private readonly handlers = new Map<string, (payload: string) => void>();
  private readonly lostHandlers: (() => void)[] = [];
  private client?: Client;
  private closed = false;
  private reconnectTimer?: NodeJS.Timeout;
  listening = false;
  outage?: ListenerOutage;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  /**
   * One handler per channel: a later one replaces the earlier. Resolves once the channel's LISTEN
   * is in place, so a notification sent after that arrives. While the connection is down it
   * resolves at once: `listening` is then false, and the caller must not count on notifications.
   */
  on(channel: string, handler: (payload: string) => void): Promise<void> {
    const known = this.handlers.has(channel);
    this.handlers.set(channel, handler);
    if (known || !this.listening || !this.client) return Promise.resolve();
    return this.client.query(`listen ${channel}`).then(
      () => undefined,
      (err: Error) => this.lost(err),
    );
  }

  /**
   * Runs this process's handler for `channel` now, as the notification will when it arrives:
   * for a change this process committed, which its next request must not wait for.
   */
  deliver(channel: string, payload: string): void {
    this.handlers.get(channel)?.(payload);
  }

  onLost(handler: () => void): void {
    this.lostHandlers.push(handler);
  }

  /** Resolves once LISTEN is in place on every channel (or failed; then it retries). */
  async start(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.databaseUrl });
    this.client = client;
    client.on('notification', (message) => this.handlers.get(message.channel)?.(message.payload ?? ''));
    client.on('error', (err) => this.lost(err));
    client.on('end', () => this.lost(new Error('listener connection ended')));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
      this.listening = true;
      if (this.outage) this.logger.info({ down_since: this.outage.since }, 'change listener back; caches enabled');
      this.outage = undefined;
    } catch (err) {
      this.lost(err as Error);
    }
  }

  private lost(err: Error): void {
    if (this.closed || !this.client) return;
    if (!this.outage) {
      this.logger.warn({ err }, 'change listener down; caches disabled until it is back (retrying every second)');
      this.outage = { since: new Date(), error: err.message };
    } else {
      this.outage.error = err.message;
    }
    this.listening = false;
    for (const handler of this.lostHandlers) handler();
    this.client.removeAllListeners();
    this.client.end().catch(() => undefined);
    this.client = undefined;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.start(), RECONNECT_MS);
  }

  /**
   * Stops listening for good, as the process stops. Not a loss: lost-handlers do not run, since
   * they wake every log follower to re-read, and at shutdown those reads raced the pool's
   * destruction. Caches need no clearing: with `listening` false they serve nothing.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
  }
}
