import type { ChangeListener } from '../db/notifications';

// Background loops that a commit's notification wakes (the search outbox drain, the scorecard
// queue waker): their start and stop, and the pause between their passes.

export class LoopPause {
  private wakeUp?: () => void;
  /** A wake-up that came while the loop was working: its next pause ends at once. */
  private pending = false;
  private halted = false;

  /** Ends the pause under way, or, while the loop works, the next one. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pending = true;
  }

  /** Ends the pause under way and every later one: the loop is stopping. */
  halt(): void {
    this.halted = true;
    this.wakeUp?.();
  }

  /**
   * Waits `ms`, or less when woken. A pause that is not `wakeable` (a loop backing off from a
   * failing service, which a commit's notification should not retry early) ends only at its time
   * or on halt.
   */
  sleep(ms: number, wakeable = true): Promise<void> {
    if (this.halted || (wakeable && this.pending)) {
      this.pending = false;
      return Promise.resolve();
    }
    this.pending = false;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = wakeable ? done : () => this.halted && done();
    });
  }
}

/**
 * A loop that runs passes until stopped, its pause between them cut short by a notification on
 * `channel` (a subclass's `loop` sleeps on `pause` after each pass, and ends once `stopped`).
 */
export abstract class NotifiedLoop {
  protected stopped = false;
  protected readonly pause = new LoopPause();
  private running?: Promise<void>;

  constructor(
    private readonly changes: ChangeListener,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    await this.changes.on(this.channel, () => this.pause.wake());
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pause.halt();
    await this.running;
  }

  protected abstract loop(): Promise<void>;
}
