import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSessionVerifier, signDevSessionToken } from '../../core/auth/sessionTokens';
import { loadConfig } from '../../core/config';

// The verifier reuses a verified token's claims (a session sends the same token on every
// request), but never past the token's expiry.
const config = { ...loadConfig(), dataDir: mkdtempSync(path.join(tmpdir(), 'session-tokens-')) };
const claims = { subject: 'sub-1', email: 'ada@acme.test', name: 'Ada', tenantId: 'acme', groups: ['ops'] };

afterEach(() => jest.useRealTimers());

test('a token verified once gives the same claims again, and is refused once it has expired', async () => {
  jest.useFakeTimers({ now: new Date('2026-11-23T12:00:00Z'), doNotFake: ['nextTick', 'setImmediate'] });
  const verify = await createSessionVerifier(config);
  const token = await signDevSessionToken(config, claims, 60);
  const first = await verify(token);
  expect(first).toEqual(expect.objectContaining({ email: 'ada@acme.test', tenantId: 'acme', groups: ['ops'] }));
  expect(await verify(token)).toEqual(first);

  jest.setSystemTime(new Date('2026-11-23T12:01:01Z'));
  await expect(verify(token)).rejects.toThrow(/exp/);
});

test('a token that fails its signature check is refused every time, never cached', async () => {
  const verify = await createSessionVerifier(config);
  const token = await signDevSessionToken(config, claims, 60);
  const forged = `${token.slice(0, -4)}AAAA`;
  await expect(verify(forged)).rejects.toThrow();
  await expect(verify(forged)).rejects.toThrow();
  expect((await verify(token)).subject).toBe('sub-1');
});
