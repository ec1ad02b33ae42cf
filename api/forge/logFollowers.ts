import type { ChangeListener } from '../../db/notifications';
import { RUN_CHANGES_CHANNEL } from '../../core/forge/runStore';

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
  private readonly subscribed: Promise<void>;

  constructor(private readonly changes: ChangeListener) {
    this.subscribed = changes.on(RUN_CHANGES_CHANNEL, (runId) => {
      for (const wake of this.followers.get(runId) ?? []) wake();
    });
    // Whatever was notified while the connection was down is lost: everyone re-reads.
    changes.onLost(() => this.followers.forEach((wakes) => wakes.forEach((wake) => wake())));
  }

  /**
   * Resolves once this process's LISTEN is in place, so a line committed after it wakes its
   * followers: a follower waits for it before its first read.
   */
  ready(): Promise<void> {
    return this.subscribed;
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
export function runLogFollowers(changes: ChangeListener): RunLogFollowers {
  let followers = byListener.get(changes);
  if (!followers) {
    followers = new RunLogFollowers(changes);
    byListener.set(changes, followers);
  }
  return followers;
}
