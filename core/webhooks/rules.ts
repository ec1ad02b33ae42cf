import { createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { egressRefusal, parseHttpUrl, type EgressAllowList } from '../egress/egressRules';
import { EVENT_KINDS } from './types';

// Outbound webhooks' pure logic: Standard Webhooks 1.0 secrets and signatures, and how an
// answer is classified (the retry schedule is the delivery workflow's). No I/O.

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: a secret is 24 to 64 random bytes. */
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A new secret: 32 random bytes, `whsec_<base64>`. */
export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** Why `secret` is not a usable `whsec_<base64>` secret, or undefined when it is. */
export function secretProblem(secret: string): string | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : undefined;
  if (encoded === undefined || !BASE64.test(encoded) || encoded.length % 4 !== 0)
    return 'must be whsec_ followed by base64';
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < SECRET_MIN_BYTES || bytes > SECRET_MAX_BYTES)
    return `must encode ${SECRET_MIN_BYTES} to ${SECRET_MAX_BYTES} bytes (has ${bytes})`;
  return undefined;
}

/** The `webhook-signature` header: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt (a fresh timestamp each time; the id stays the message's). */
export function deliveryHeaders(secret: string, messageId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'Shipyard-Webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(secret, messageId, timestamp, body),
  };
}

/** The body: Standard Webhooks' recommended `{type, timestamp, data}`. */
export const deliveryBody = (event: { kind: string; created_at: Date; data: unknown }): string =>
  JSON.stringify({ type: event.kind, timestamp: event.created_at.toISOString(), data: event.data });

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: Date): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** What an HTTP status means for the delivery. */
export function statusOutcome(status: number): 'delivered' | 'retry' | 'final' | 'disable' {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'disable';
  if (status === 429 || status >= 500 || status < 200) return 'retry';
  return 'final';
}

/** The entries of `events` that are not event kinds, with their positions. */
export function unknownEventKinds(events: readonly string[]): { index: number; kind: string }[] {
  return events.flatMap((kind, index) => ((EVENT_KINDS as readonly string[]).includes(kind) ? [] : [{ index, kind }]));
}

/**
 * Why the egress guard will refuse `url` whatever DNS says: its host is an address it refuses
 * (private, loopback, …) and the allow-list does not name. A host name passes: the guard checks
 * what it resolves to at each attempt.
 */
export function urlRefusal(allow: EgressAllowList, url: string): string | undefined {
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) return undefined;
  const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
  return egressRefusal(allow, { host, port, address: host });
}
