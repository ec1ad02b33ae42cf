import { requestIdSource } from '../../api/http/requestIds';

// RFC 9562 layout: version 8 in the 13th hex digit, the variant's bits 10 in the 17th.
const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('request ids are version-8 UUIDs that count up within a process', () => {
  const next = requestIdSource();
  const ids = [next(), next(), next()];
  for (const id of ids) expect(id).toMatch(UUID_V8);
  expect(ids.map((id) => id.slice(24))).toEqual(['000000000001', '000000000002', '000000000003']);
  expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
});

test('two processes draw different prefixes', () => {
  const a = requestIdSource(Buffer.alloc(10, 0x00));
  const b = requestIdSource(Buffer.alloc(10, 0xff));
  expect(a()).toBe('00000000-0000-8000-8000-000000000001');
  expect(b()).toBe('ffffffff-ffff-8fff-bfff-000000000001');
});
