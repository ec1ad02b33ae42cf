import type { Clock } from '../http/versionedCache';

/**
 * Counts failures per key in fixed windows: past `maxFailures` in a window, the key is refused
 * until the window ends.
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

  /** Takes back a failure counted in advance for an attempt that succeeded. */
  forgive(key: string): void {
    const window = this.windows.get(key);
    if (window && window.failures > 0) window.failures--;
  }

  /** Drops ended windows at most once a window, so distinct keys cannot grow the map without bound. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.startedAt + this.windowMs <= now) this.windows.delete(key);
  }
}

export interface FailureBudgets {
  failuresPerPrefixAndClient: number;
  failuresPerPrefix: number;
  failureWindowMs: number;
}

/**
 * The budgets of failed API-key validations. Each failure with a known prefix costs a bcrypt
 * (~250 ms of a CPU), so a key prefix has a budget per client address and one across every
 * address together: more addresses do not buy more CPU. An attempt is counted as failed before
 * it runs, so attempts sent at once see each other; one that matches is forgiven. Per process:
 * the budgets hold per API process, which is what bounds each process's CPU.
 */
export class ApiKeyFailureBudget {
  private readonly perClient: FailureLimiter;
  private readonly perPrefix: FailureLimiter;

  constructor(budgets: FailureBudgets, now: Clock = Date.now) {
    this.perClient = new FailureLimiter(budgets.failuresPerPrefixAndClient, budgets.failureWindowMs, now);
    this.perPrefix = new FailureLimiter(budgets.failuresPerPrefix, budgets.failureWindowMs, now);
  }

  /** Milliseconds until `client` may try `prefix` again; 0 when it may now. */
  retryAfterMs(prefix: string, client: string): number {
    return Math.max(this.perClient.retryAfterMs(`${prefix}|${client}`), this.perPrefix.retryAfterMs(prefix));
  }

  /** Counts an attempt as failed; call what it returns if the attempt succeeds after all. */
  charge(prefix: string, client: string): () => void {
    const clientKey = `${prefix}|${client}`;
    this.perClient.recordFailure(clientKey);
    this.perPrefix.recordFailure(prefix);
    return () => {
      this.perClient.forgive(clientKey);
      this.perPrefix.forgive(prefix);
    };
  }
}
