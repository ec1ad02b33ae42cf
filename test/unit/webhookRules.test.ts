import { Webhook } from 'standardwebhooks';
import {
  deliveryBody,
  deliveryHeaders,
  generateSecret,
  retryAfterMs,
  secretProblem,
  statusOutcome,
  unknownEventKinds,
  urlRefusal,
} from '../../core/webhooks/rules';
import { parseEgressAllow } from '../../core/egress/egressRules';
import { retryDelayMs } from '../../workflows/webhookDelivery';

// Outbound webhooks' pure logic: signatures as the standardwebhooks library verifies them, secrets,
// the retry schedule and how an answer is classified.

test('headers signed with a generated secret verify with standardwebhooks, and fail with another secret', () => {
  const secret = generateSecret();
  const body = deliveryBody({ kind: 'entity.created', created_at: new Date(), data: { entity: { id: 'x' } } });
  const headers = deliveryHeaders(secret, 'msg_1', body, new Date());
  expect(new Webhook(secret).verify(body, headers)).toMatchObject({
    type: 'entity.created',
    data: { entity: { id: 'x' } },
  });
  expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
});

test('a secret must be whsec_ and the base64 of 24 to 64 bytes', () => {
  expect(secretProblem(generateSecret())).toBeUndefined();
  expect(secretProblem('hunter2')).toBe('must be whsec_ followed by base64');
  expect(secretProblem('whsec_not base64!')).toBe('must be whsec_ followed by base64');
  expect(secretProblem(`whsec_${Buffer.alloc(10).toString('base64')}`)).toBe('must encode 24 to 64 bytes (has 10)');
  expect(secretProblem(`whsec_${Buffer.alloc(65).toString('base64')}`)).toBe('must encode 24 to 64 bytes (has 65)');
});

test('unknown event kinds are named with their positions', () => {
  expect(unknownEventKinds(['entity.created', 'x.y', 'agent.registered', 'z'])).toEqual([
    { index: 1, kind: 'x.y' },
    { index: 3, kind: 'z' },
  ]);
});

test('the retry delay doubles up to its cap, jittered between a tenth and the whole step', () => {
  const schedule = { base_delay_ms: 1_000, max_delay_ms: 8_000, window_ms: 86_400_000 };
  expect([1, 2, 3, 4, 5, 40].map((attempt) => retryDelayMs(attempt, schedule, 0.999999))).toEqual([
    1_000, 2_000, 4_000, 8_000, 8_000, 8_000,
  ]);
  expect(retryDelayMs(3, schedule, 0)).toBe(400);
});

test('Retry-After in seconds or as an HTTP date; absent or unreadable is undefined', () => {
  const now = new Date('2026-11-28T00:00:00Z');
  expect(retryAfterMs('120', now)).toBe(120_000);
  expect(retryAfterMs('Sat, 28 Nov 2026 00:00:30 GMT', now)).toBe(30_000);
  expect(retryAfterMs(undefined, now)).toBeUndefined();
  expect(retryAfterMs('soon', now)).toBeUndefined();
});

test('2xx delivers; 429 and 5xx retry; 410 disables; other 4xx are final', () => {
  expect([200, 204, 429, 500, 503, 410, 400, 404].map(statusOutcome)).toEqual([
    'delivered',
    'delivered',
    'retry',
    'retry',
    'retry',
    'disable',
    'final',
    'final',
  ]);
});

test('a URL on an address the egress guard refuses is refused unless allowed; a host name is left to the guard at each attempt', () => {
  const none = parseEgressAllow([]);
  expect(urlRefusal(none, 'http://10.0.0.5/h')).toBe(
    'egress refused: 10.0.0.5 is a private address (allow it with SHIPYARD_EGRESS_ALLOW)',
  );
  expect(urlRefusal(none, 'http://[::1]:8080/h')).toContain('egress refused: ::1');
  expect(urlRefusal(parseEgressAllow(['10.0.0.0/8']), 'http://10.0.0.5/h')).toBeUndefined();
  expect(urlRefusal(none, 'https://93.184.215.14/h')).toBeUndefined();
  expect(urlRefusal(none, 'http://localhost/h')).toBeUndefined();
});
