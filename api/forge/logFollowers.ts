import type { Knex } from 'knex';
import type { ChangeListener } from '../../db/notifications';
import { RUN_CHANGES_CHANNEL } from '../../core/forge/runStore';

/** How often the first subscriber re-sends its handshake until the LISTEN is seen in place. */
const HANDSHAKE_RETRY_MS = 250;
/** While the shared LISTEN connection is down, followers re-read at this pace instead. */
const DEGRADED_REREAD_MS = 2_000;

/**
 * The API process's one subscription to run changes (new log lines, a status written): a
 * notification names a run, and only the followers of that run wake up. Subscribed through the
 * app's shared LISTEN connection (db/notifications.ts), so following costs no connection per
 * client. While that connection is down, notifications are lost: followers then re-read at a
 * slow pace until it is back.
 */
export class RunLogFollowers {
  private readonly followers = new Map<string, Set<() => void>>();
  private readonly handshake = `handshake-${process.pid}-${Math.random().toString(36).slice(2)}`;
  private handshakeSeen = false;
  private readyWaiters: (() => void)[] = [];

  constructor(
    private readonly changes: ChangeListener,
    private readonly db: Knex,
  ) {
    changes.on(RUN_CHANGES_CHANNEL, (runId) => {
      if (runId === this.handshake) return this.markReady();
      for (const wake of this.followers.get(runId) ?? []) wake();
    });
    // Whatever was notified while the connection was down is lost: everyone re-reads.
    changes.onLost(() => this.followers.forEach((wakes) => wakes.forEach((wake) => wake())));
  }

  private markReady() {
    this.handshakeSeen = true;
    this.readyWaiters.forEach((resolve) => resolve());
    this.readyWaiters = [];
  }

  /**
   * Resolves once this process's LISTEN is in place: a notification sent now arrives. LISTEN is
   * issued when the channel is first subscribed, without a reply to wait on, so the first
   * follower proves it with a notification of its own before reading (a line committed in
   * between would otherwise wake nobody). Gives up waiting when the connection is down.
   */
  async ready(): Promise<void> {
    while (!this.handshakeSeen && this.changes.listening) {
      const seen = new Promise<void>((resolve) => this.readyWaiters.push(resolve));
      await this.db.raw('select pg_notify(?, ?)', [RUN_CHANGES_CHANNEL, this.handshake]);
      await Promise.race([seen, new Promise((resolve) => setTimeout(resolve, HANDSHAKE_RETRY_MS))]);
    }
  }

  /** Calls `wake` whenever run `runId` changes; returns the unsubscribe. */
  follow(runId: string, wake: () => void): () => void {
    const wakes = this.followers.get(runId) ?? new Set();
    wakes.add(wake);
    this.followers.set(runId, wakes);
    return () => {
      wakes.delete(wake);
      if (!wakes.size) this.followers.delete(runId);
    };
  }

  /** How long a follower may sleep without a wake-up: forever, unless notifications are down. */
  get rereadAfterMs(): number | null {
    return this.changes.listening ? null : DEGRADED_REREAD_MS;
  }
}

const byListener = new WeakMap<ChangeListener, RunLogFollowers>();

/** The process's followers, subscribed on first use. */
export function runLogFollowers(changes: ChangeListener, db: Knex): RunLogFollowers {
  let followers = byListener.get(changes);
  if (!followers) {
    followers = new RunLogFollowers(changes, db);
    byListener.set(changes, followers);
  }
  return followers;
}
