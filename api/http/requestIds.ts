import { randomBytes } from 'node:crypto';

/**
 * Request ids for one process: UUIDs of RFC 9562's version 8 (custom layout) whose first 74 bits
 * are random, drawn once when the process starts, and whose last 48 bits count its requests.
 * Unique across processes and restarts like a random UUID, in the same shape, at the cost of a
 * counter: `randomUUID()` (random bytes drawn 2 KiB at a time from OpenSSL) cost a bare Koa app
 * ~1 µs of CPU a request and 5–6% of its throughput, against a fixed id.
 */
export function requestIdSource(random: Buffer = randomBytes(10)): () => string {
  const hex = random.toString('hex');
  const variant = ((random[9] & 0x3) | 0x8).toString(16);
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(15, 18)}-`;
  let issued = 0;
  return () => prefix + (++issued).toString(16).padStart(12, '0');
}
