import { randomInt } from 'node:crypto';

/**
 * Host uids handed out one per running sandbox, so each run has a process budget of its own
 * (RLIMIT_NPROC counts per host uid) and no two runs share an owner. Allocation starts at a
 * random offset, so two worker processes on one host rarely pick the same uid; within a
 * process a uid is never handed out twice at once.
 */
export class UidPool {
  private readonly taken = new Set<number>();
  private next: number;

  constructor(private readonly range: { first: number; last: number }) {
    this.next = range.first + randomInt(this.size);
  }

  private get size(): number {
    return this.range.last - this.range.first + 1;
  }

  take(): number {
    for (let tried = 0; tried < this.size; tried++) {
      const uid = this.next;
      this.next = uid === this.range.last ? this.range.first : uid + 1;
      if (!this.taken.has(uid)) {
        this.taken.add(uid);
        return uid;
      }
    }
    throw new Error(`all ${this.size} sandbox uids (${this.range.first}-${this.range.last}) are in use`);
  }

  release(uid: number): void {
    this.taken.delete(uid);
  }
}
