/** Gives back the slot taken by `KeyedGate.enter`; calling it again does nothing. */
export type Release = () => void;

interface Lane {
  running: number;
  /** Callers waiting for a slot, oldest first; each is handed one as another is released. */
  waiting: ((release: Release) => void)[];
}

/**
 * At most `limit` holders per key at once (a tenant's heavy reads, every bcrypt check of the
 * process under one key). A caller over the limit waits in line up to `waitMs`, then is refused;
 * one key's line never holds up another key's. Ours: the semaphore packages (p-limit and the
 * like) have no per-key lanes and no deadline on a wait.
 */
export class KeyedGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly limit: number) {}

  /** A slot of `key`, or undefined when none came free within `waitMs` (0: only one free now). */
  enter(key: string, waitMs: number): Promise<Release | undefined> {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { running: 0, waiting: [] }));
    if (lane.running < this.limit) {
      lane.running++;
      return Promise.resolve(this.releaser(key, lane));
    }
    if (waitMs <= 0) return Promise.resolve(undefined);
    const { waiting } = lane;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(admit), 1);
        resolve(undefined);
      }, waitMs);
      const admit = (release: Release) => {
        clearTimeout(timer);
        resolve(release);
      };
      waiting.push(admit);
    });
  }

  /** Holders of `key` now (for tests and metrics). */
  running(key: string): number {
    return this.lanes.get(key)?.running ?? 0;
  }

  private releaser(key: string, lane: Lane): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = lane.waiting.shift();
      // The slot passes straight to the next in line, so a newcomer cannot take it first.
      if (next) return next(this.releaser(key, lane));
      lane.running--;
      if (lane.running === 0) this.lanes.delete(key);
    };
  }
}
