import type { Clock } from '../http/versionedCache';

/**
 * Counts failed API-key validations per key prefix and client, in fixed windows. Each failure
 * with a known prefix costs a bcrypt (~250 ms of a CPU), so past `maxFailures` in a window the
 * caller is refused before any lookup until the window ends. Per process: the limit holds per
 * API process, which is what bounds each process's CPU.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { startedAt: number; failures: number }>();
  private lastSweep = 0;

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: Clock = Date.now,
  ) {}

  /** Milliseconds until `key` may try again; 0 when it may now. */
  retryAfterMs(key: string): number {
    const window = this.windows.get(key);
    if (!window) return 0;
    const left = window.startedAt + this.windowMs - this.now();
    if (left <= 0) {
      this.windows.delete(key);
      return 0;
    }
    return window.failures >= this.maxFailures ? left : 0;
  }

  recordFailure(key: string): void {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.startedAt + this.windowMs <= now) {
      this.sweep(now);
      window = { startedAt: now, failures: 0 };
      this.windows.set(key, window);
    }
    window.failures++;
  }

  /** Drops ended windows at most once a window, so distinct keys cannot grow the map without bound. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.startedAt + this.windowMs <= now) this.windows.delete(key);
  }
}
