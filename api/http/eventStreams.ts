import type { ChangeListener } from '../../db/notifications';
import { rateLimited } from '../../core/errors';

// What every server-sent event stream shares (a run's log, a user's notifications): a budget of
// open streams per holder, the end of a stream, and the followers a Postgres notification wakes.

/** Open streams per holder key (`tenant:<id>`, `user:<tenant id>:<user id>`, …), in this process. */
const openStreams = new Map<string, number>();

/** A holder of streams and how many it may hold at once. */
export interface StreamBudget {
  key: string;
  cap: number;
  /** Who is over it, for the refusal's message. */
  holder: string;
}

/**
 * Counts a new stream of `what` against every budget, or refuses it (429) when one is full: one
 * user cannot hold every stream of the tenant. Returns the release, which may be called more
 * than once. Each open stream is a socket and a subscription, not a database connection.
 */
export function admitStream(what: string, budgets: StreamBudget[]): () => void {
  const full = budgets.find(({ key, cap }) => (openStreams.get(key) ?? 0) >= cap);
  if (full) {
    throw rateLimited(
      `At most ${full.cap} ${what} may be open at once per ${full.holder}; close one or try again later`,
      10,
    );
  }
  for (const { key } of budgets) openStreams.set(key, (openStreams.get(key) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const { key } of budgets) {
      const left = (openStreams.get(key) ?? 1) - 1;
      if (left) openStreams.set(key, left);
      else openStreams.delete(key);
    }
  };
}

/** Resolves when the client leaves or the process begins to stop, whichever comes first. */
export function endOfStream(req: NodeJS.EventEmitter, stopping: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stopping.aborted) return resolve();
    const end = () => {
      req.off('close', end);
      stopping.removeEventListener('abort', end);
      resolve();
    };
    req.once('close', end);
    stopping.addEventListener('abort', end);
  });
}

/** While the shared LISTEN connection is down, followers re-read at this pace instead. */
const DEGRADED_REREAD_MS = 2_000;

/**
 * The API process's one subscription to a channel of changes whose notifications name what
 * changed (a run, a user): only the followers of that key wake up. Subscribed through the app's
 * shared LISTEN connection (db/notifications.ts), so following costs no connection per client.
 * While that connection is down, notifications are lost: followers then re-read at a slow pace
 * until it is back.
 */
export class ChangeFollowers {
  private readonly followers = new Map<string, Set<() => void>>();
  private readonly subscribed: Promise<void>;

  constructor(
    private readonly changes: ChangeListener,
    channel: string,
  ) {
    this.subscribed = changes.on(channel, (key) => {
      for (const wake of this.followers.get(key) ?? []) wake();
    });
    // Whatever was notified while the connection was down is lost: everyone re-reads.
    changes.onLost(() => this.followers.forEach((wakes) => wakes.forEach((wake) => wake())));
  }

  /**
   * Resolves once this process's LISTEN is in place, so a change committed after it wakes its
   * followers: a follower waits for it before its first read.
   */
  ready(): Promise<void> {
    return this.subscribed;
  }

  /** Calls `wake` whenever `key` changes; returns the unsubscribe. */
  follow(key: string, wake: () => void): () => void {
    const wakes = this.followers.get(key) ?? new Set();
    wakes.add(wake);
    this.followers.set(key, wakes);
    return () => {
      wakes.delete(wake);
      if (!wakes.size) this.followers.delete(key);
    };
  }

  /** How long a follower may sleep without a wake-up: forever, unless notifications are down. */
  get rereadAfterMs(): number | null {
    return this.changes.listening ? null : DEGRADED_REREAD_MS;
  }

  /**
   * A stream's view of `key` until `closed` resolves: `reading()` before each read, then
   * `nextChange()` resolves once `key` changed since (at once if it already has), the stream
   * closed, or, with notifications down, a while passed.
   */
  watch(key: string, closed: Promise<void>): ChangeWatch {
    let open = true;
    let changed = false;
    let wakeUp = () => {};
    const unfollow = this.follow(key, () => {
      changed = true;
      wakeUp();
    });
    void closed.then(() => {
      open = false;
      wakeUp();
    });
    return {
      get open() {
        return open;
      },
      reading() {
        changed = false;
      },
      nextChange: () =>
        new Promise<void>((resolve) => {
          if (changed || !open) return resolve();
          wakeUp = resolve;
          const after = this.rereadAfterMs;
          if (after !== null) setTimeout(resolve, after).unref();
        }),
      unfollow,
    };
  }
}

export interface ChangeWatch {
  /** False once the stream's client left or the process is stopping. */
  readonly open: boolean;
  reading(): void;
  nextChange(): Promise<void>;
  unfollow(): void;
}

const byListener = new WeakMap<ChangeListener, Map<string, ChangeFollowers>>();

/** The process's followers of `channel`, subscribed on first use. */
export function changeFollowers(changes: ChangeListener, channel: string): ChangeFollowers {
  const channels = byListener.get(changes) ?? new Map<string, ChangeFollowers>();
  byListener.set(changes, channels);
  let followers = channels.get(channel);
  if (!followers) {
    followers = new ChangeFollowers(changes, channel);
    channels.set(channel, followers);
  }
  return followers;
}
