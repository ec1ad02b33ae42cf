import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Clock } from './versionedCache';

/** Keys (tenants) whose pace is kept at most; a key unseen for longer than a burst needs none. */
const MAX_KEYS = 10_000;

/**
 * Paces each key's requests to `perSecond`, with a burst of as many: a request past that waits its
 * turn (a timer, no CPU), in order of arrival, and one whose turn is further off than `maxWaitMs`
 * is refused at once. The generic cell rate algorithm: each key keeps the time its next request
 * is due, so a key costs one number, and no timer runs for a key nobody waits on. Ours rather
 * than rate-limiter-flexible's RateLimiterQueue, which keeps a queue per key for good and bounds
 * its length, not the wait.
 */
export class RequestPacer {
  private readonly due = new LRUCache<string, number>({ max: MAX_KEYS });
  private readonly intervalMs: number;
  private readonly burstMs: number;

  constructor(
    perSecond: number,
    private readonly maxWaitMs: number,
    private readonly now: Clock = Date.now,
  ) {
    this.intervalMs = 1000 / perSecond;
    // A burst of `perSecond` requests: the last of them is due this far ahead of now.
    this.burstMs = 1000 - this.intervalMs;
  }

  /** Waits for `key`'s turn; false, at once, when that turn is more than `maxWaitMs` away. */
  async take(key: string): Promise<boolean> {
    const now = this.now();
    const due = Math.max(this.due.get(key) ?? now, now);
    const waitMs = due - now - this.burstMs;
    if (waitMs > this.maxWaitMs) return false;
    this.due.set(key, due + this.intervalMs);
    if (waitMs > 0) await sleep(waitMs);
    return true;
  }
}
