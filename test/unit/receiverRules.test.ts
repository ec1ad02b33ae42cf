import { createHmac } from 'node:crypto';
import {
  pushChangesDocumentation,
  receiverEvent,
  signatureMatches,
  type PushPayload,
} from '../../core/sourceHost/receiverRules';

// The receiver's pure rules: the X-Hub-Signature-256 check and what each event asks for.

const SECRET = 'a-webhook-secret-of-the-host';
const body = Buffer.from('{"zen":"Keep it logically awesome."}', 'utf8');
const signed = (secret: string, bytes: Buffer) => `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}`;

describe('signatureMatches', () => {
  test('accepts the HMAC-SHA256 of the exact bytes with the secret, in either case of hex', () => {
    expect(signatureMatches(SECRET, body, signed(SECRET, body))).toBe(true);
    expect(signatureMatches(SECRET, body, signed(SECRET, body).toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
  });

  test('refuses another secret, other bytes (one byte or whitespace changed), and no signature', () => {
    expect(signatureMatches(SECRET, body, signed('another-secret', body))).toBe(false);
    expect(signatureMatches(SECRET, Buffer.from(' ' + body.toString()), signed(SECRET, body))).toBe(false);
    const tampered = Buffer.from(body);
    tampered[tampered.length - 3] ^= 1;
    expect(signatureMatches(SECRET, tampered, signed(SECRET, body))).toBe(false);
    expect(signatureMatches(SECRET, body, undefined)).toBe(false);
    expect(signatureMatches(SECRET, body, '')).toBe(false);
  });

  test('refuses malformed headers without throwing: another scheme, a short, long or non-hex digest', () => {
    const hex = signed(SECRET, body).slice('sha256='.length);
    for (const header of [
      `sha1=${hex}`,
      hex,
      `sha256=${hex.slice(0, 62)}`,
      `sha256=${hex}00`,
      `sha256=${hex.slice(0, 63)}g`,
      `sha256= ${hex}`,
      `sha256=${hex}\n`,
    ]) {
      expect(signatureMatches(SECRET, body, header)).toBe(false);
    }
  });
});

const repository = { full_name: 'acme/payments', name: 'payments', owner: { login: 'acme' }, default_branch: 'main' };
const push = (commits: PushPayload['commits'], ref = 'refs/heads/main'): PushPayload => ({ ref, repository, commits });

describe('pushChangesDocumentation', () => {
  test('a README or Markdown file added, changed or removed on the default branch', () => {
    expect(pushChangesDocumentation(push([{ modified: ['README.md'] }]), 'main')).toBe(true);
    expect(pushChangesDocumentation(push([{ added: ['src/a.ts'] }, { removed: ['docs/old.markdown'] }]), 'main')).toBe(
      true,
    );
    expect(pushChangesDocumentation(push([{ added: ['docs/guides/Setup.MD'] }]), 'main')).toBe(true);
    expect(pushChangesDocumentation(push([{ modified: ['readme'] }]), 'main')).toBe(true);
    expect(pushChangesDocumentation(push([{ modified: ['pkg/README.rst'] }]), 'main')).toBe(true);
  });

  test('nothing for code only, another branch, a deleted branch, or no commits', () => {
    expect(pushChangesDocumentation(push([{ modified: ['src/readme.ts.bak/x.ts', 'md'] }]), 'main')).toBe(false);
    expect(pushChangesDocumentation(push([{ modified: ['README.md'] }], 'refs/heads/feature'), 'main')).toBe(false);
    expect(pushChangesDocumentation(push([{ modified: ['README.md'] }], 'refs/tags/main'), 'main')).toBe(false);
    expect(pushChangesDocumentation({ ...push([{ modified: ['README.md'] }]), deleted: true }, 'main')).toBe(false);
    expect(pushChangesDocumentation(push(undefined), 'main')).toBe(false);
  });
});

describe('receiverEvent', () => {
  test('a rename and a transfer name the repository as it was; other actions and events do not', () => {
    expect(
      receiverEvent('repository', {
        action: 'renamed',
        repository: { ...repository, full_name: 'acme/billing', name: 'billing' },
        changes: { repository: { name: { from: 'payments' } } },
      }),
    ).toMatchObject({ kind: 'repository', action: 'renamed', previousFullName: 'acme/payments' });
    expect(
      receiverEvent('repository', {
        action: 'transferred',
        repository: { ...repository, full_name: 'globex/payments', owner: { login: 'globex' } },
        changes: { owner: { from: { organization: { login: 'acme' } } } },
      }),
    ).toMatchObject({ action: 'transferred', previousFullName: 'acme/payments' });
    expect(receiverEvent('repository', { action: 'archived', repository })).not.toHaveProperty('previousFullName');
    expect(receiverEvent('repository', { action: 'anonymous_access_enabled', repository })).toEqual({
      kind: 'ignored',
    });
    expect(receiverEvent('issues', { action: 'opened' })).toEqual({ kind: 'ignored' });
    expect(receiverEvent('ping', { zen: 'hi' })).toEqual({ kind: 'ping' });
  });

  test("a push's repository takes the host's defaults for the fields its payload leaves out", () => {
    expect(receiverEvent('push', push([{ modified: ['README.md'] }]))).toEqual({
      kind: 'push',
      crawl: true,
      repository: expect.objectContaining({ full_name: 'acme/payments', owner: 'acme', topics: [], archived: false }),
    });
  });
});
