import { write, writeSync } from 'node:fs';

/** When a process's log lines leave for its file descriptor. */
export interface LineBatching {
  /** Pending bytes that make a write. */
  chunkBytes: number;
  /** How long a line may wait when traffic is light. */
  lingerMs: number;
  /** Pending characters beyond which new lines are dropped (and counted), not queued. */
  maxPendingChars: number;
}

const DEFAULT_BATCHING: LineBatching = { chunkBytes: 16 * 1024, lingerMs: 500, maxPendingChars: 64 * 1024 * 1024 };

/** UTF-8 takes at most three bytes for each UTF-16 code unit of a string. */
const MAX_UTF8_BYTES_PER_CHAR = 3;

/**
 * A process's log destination (what pino writes its lines to): lines gather in memory and go to
 * the file descriptor in one asynchronous write(2) per `chunkBytes`, or after `lingerMs` when
 * traffic is light; one write at a time, so lines keep their order. What is pending when the
 * process exits is written synchronously then.
 *
 * Each line is encoded into the chunk being filled as it comes, while it is young: kept as
 * strings until their chunk was joined, the lines of a busy API survived garbage collections
 * and were copied again to be joined, ~1 µs a request (measured on /healthz). pino's own
 * destination (sonic-boom) was dearer still: it appends each line to one pending string and
 * measures that string's UTF-8 length on every line, copying all the lines pending before it.
 *
 * A reader that stops reading (a stalled pipe) blocks the write in libuv's thread pool, or on a
 * non-blocking descriptor has it tried again every 10 ms, never blocking the event loop; lines
 * then queue up to `maxPendingChars` and are dropped beyond it, counted in `dropped`. A
 * descriptor that refuses writes (the reader has gone) loses the lines of that write. At exit,
 * a write still in the thread pool may land after the pending lines written then.
 */
export class LineDestination {
  /** The chunk lines are encoded into, how many of its bytes they fill, and their characters. */
  private filling: Buffer;
  private filled = 0;
  private fillingChars = 0;
  /** Chunks sealed while a write was under way, in order, and their lines' characters. */
  private readonly queued: { bytes: Buffer; chars: number }[] = [];
  private queuedChars = 0;
  private writing = false;
  private lingering: NodeJS.Timeout | undefined;
  /** A chunk's unwritten rest while it waits to be tried again (a full non-blocking pipe). */
  private retrying: Buffer | undefined;
  /** Lines dropped because too much was pending. */
  dropped = 0;

  constructor(
    private readonly fd: number,
    private readonly batching: LineBatching = DEFAULT_BATCHING,
  ) {
    this.filling = this.newChunk(0);
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.queuedChars + this.fillingChars + line.length > this.batching.maxPendingChars) {
      this.dropped++;
      return false;
    }
    const mostBytes = line.length * MAX_UTF8_BYTES_PER_CHAR;
    if (this.filled + mostBytes > this.filling.length) this.seal(mostBytes);
    this.filled += this.filling.write(line, this.filled);
    this.fillingChars += line.length;
    if (!this.writing) this.writeOrLinger();
    return true;
  }

  /** Writes what is pending, synchronously; for the process's exit. */
  flushSync(): void {
    this.seal(0);
    const chunks = [this.retrying, ...this.queued.splice(0).map((queued) => queued.bytes)];
    this.retrying = undefined;
    this.queuedChars = 0;
    for (const chunk of chunks) {
      for (let offset = 0; chunk && offset < chunk.length;) {
        try {
          offset += writeSync(this.fd, chunk, offset);
        } catch (err) {
          // A full non-blocking pipe: try again. Anything else: the lines cannot be written.
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        }
      }
    }
  }

  /** Room for two chunks, or for a line longer than that. */
  private newChunk(atLeast: number): Buffer {
    return Buffer.allocUnsafeSlow(Math.max(2 * this.batching.chunkBytes, atLeast));
  }

  /** Queues the lines of the chunk being filled, and starts a new one with room for `atLeast` bytes. */
  private seal(atLeast: number): void {
    if (this.filled > 0) {
      this.queued.push({ bytes: this.filling.subarray(0, this.filled), chars: this.fillingChars });
      this.queuedChars += this.fillingChars;
      this.filling = this.newChunk(atLeast);
      this.filled = 0;
      this.fillingChars = 0;
    } else if (atLeast > this.filling.length) {
      this.filling = this.newChunk(atLeast);
    }
  }

  private writeNext(): void {
    if (this.writing) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    if (this.queued.length === 0) this.seal(0);
    const next = this.queued.shift();
    if (!next) return;
    this.queuedChars -= next.chars;
    this.writing = true;
    this.writeFrom(next.bytes, 0);
  }

  private writeFrom(chunk: Buffer, offset: number): void {
    write(this.fd, chunk, offset, chunk.length - offset, null, (err, written) => {
      if (err?.code === 'EAGAIN') {
        this.retrying = chunk.subarray(offset);
        setTimeout(() => {
          const rest = this.retrying;
          this.retrying = undefined;
          // Written by flushSync meanwhile otherwise.
          if (rest) this.writeFrom(rest, 0);
        }, 10).unref();
        return;
      }
      // A partial write (a signal, a nearly full pipe) goes on from where it stopped.
      if (!err && offset + written < chunk.length) {
        this.writeFrom(chunk, offset + written);
        return;
      }
      this.writing = false;
      this.writeOrLinger();
    });
  }

  /** Writes a full chunk now; lines short of one wait `lingerMs` for more. */
  private writeOrLinger(): void {
    if (this.queued.length > 0 || this.filled >= this.batching.chunkBytes) this.writeNext();
    else if (this.filled > 0) this.lingering ??= setTimeout(() => this.writeNext(), this.batching.lingerMs).unref();
  }
}
