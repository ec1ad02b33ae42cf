import {
  betaEndsAt,
  isReadOnly,
  licenseStatus,
  licenseWarnings,
  resourceUsage,
  type LicenseRow,
} from '../../core/license/rules';

const now = new Date('2026-12-01T12:00:00.000Z');
const days = (n: number) => new Date(now.getTime() + n * 86_400_000);
const unlimitedUsage = resourceUsage({ clusters: 1, nodes: 4 }, { clusters: 0, nodes: 0 });

test('the Beta period is 6 calendar months from issue for keys issued on or after 2026-11-10', () => {
  expect(betaEndsAt(new Date('2026-11-10T00:00:00Z'), 6).toISOString()).toBe('2027-05-10T00:00:00.000Z');
  expect(betaEndsAt(new Date('2026-08-31T08:00:00Z'), 6).toISOString()).toBe('2027-02-28T08:00:00.000Z');
});

test('a key issued before 2026-11-10 is floored there, unless its own 6 months end later', () => {
  expect(betaEndsAt(new Date('2026-01-15T00:00:00Z'), 6).toISOString()).toBe('2026-11-10T00:00:00.000Z');
  expect(betaEndsAt(new Date('2026-11-09T00:00:00Z'), 6).toISOString()).toBe('2027-05-09T00:00:00.000Z');
  expect(betaEndsAt(new Date('2026-01-15T00:00:00Z'), 12).toISOString()).toBe('2027-01-15T00:00:00.000Z');
});

test('read-only is a Beta license past its end; never another edition', () => {
  expect(isReadOnly('beta', days(-1), now)).toBe(true);
  expect(isReadOnly('beta', now, now)).toBe(true);
  expect(isReadOnly('beta', days(1), now)).toBe(false);
  expect(isReadOnly('standard', days(-1), now)).toBe(false);
  expect(isReadOnly('free', null, now)).toBe(false);
});

test('usage percent is of the limit, rounded down, and 0 when unlimited', () => {
  expect(resourceUsage({ clusters: 2, nodes: 7 }, { clusters: 3, nodes: 0 })).toEqual([
    { resource: 'clusters', used: 2, limit: 3, percent: 66 },
    { resource: 'nodes', used: 7, limit: 0, percent: 0 },
  ]);
});

test('expired: an expiry in the past, as an error', () => {
  expect(licenseWarnings(days(-1), unlimitedUsage, now)).toEqual([
    expect.objectContaining({ type: 'expired', level: 'error' }),
  ]);
});

test('expiring_soon: within 30 days, as a warning; 31 days out, nothing', () => {
  expect(licenseWarnings(days(30), unlimitedUsage, now)).toEqual([
    { type: 'expiring_soon', level: 'warning', message: 'The license expires in 30 day(s)' },
  ]);
  expect(licenseWarnings(days(31), unlimitedUsage, now)).toEqual([]);
  expect(licenseWarnings(null, unlimitedUsage, now)).toEqual([]);
});

test('resource_high at 80% of a limit and up to it; resource_exceeded past it, as an error; none when unlimited', () => {
  const warn = (used: number, limit: number) =>
    licenseWarnings(null, resourceUsage({ clusters: used, nodes: 0 }, { clusters: limit, nodes: 0 }), now).map((w) => [
      w.type,
      w.level,
    ]);
  expect(warn(3, 5)).toEqual([]);
  expect(warn(4, 5)).toEqual([['resource_high', 'warning']]);
  expect(warn(5, 5)).toEqual([['resource_high', 'warning']]);
  expect(warn(6, 5)).toEqual([['resource_exceeded', 'error']]);
  expect(warn(60, 0)).toEqual([]);
  const freeNodes = licenseWarnings(null, resourceUsage({ clusters: 1, nodes: 6 }, { clusters: 1, nodes: 5 }), now);
  expect(freeNodes.map((w) => `${w.type}:${w.message}`)).toEqual([
    'resource_high:1 of 1 clusters in use (100%)',
    'resource_exceeded:6 nodes in use, over the limit of 5',
  ]);
});

const betaRow: LicenseRow = {
  license_key: 'SHP-BE-x.y',
  key_prefix: 'SHP-BE',
  edition: 'beta',
  type: 'selfhosted',
  clusters: 0,
  nodes: 0,
  licensee: 'Acme',
  issued_at: new Date('2026-05-01T00:00:00Z'),
  expires_at: null,
  activated_at: new Date('2026-05-02T00:00:00Z'),
  beta_ends_at: new Date('2026-11-10T00:00:00Z'),
  beta_grace_ends_at: new Date('2026-12-10T00:00:00Z'),
};
const limits = { clusters: 3, nodes: 0 };
const used = { clusters: 1, nodes: 2 };

test('no license: free, valid, no key, not read-only', () => {
  expect(licenseStatus(undefined, false, { clusters: 1, nodes: 5 }, used, now)).toMatchObject({
    edition: 'free',
    has_license: false,
    is_valid: true,
    is_expired: false,
    key_prefix: null,
    is_read_only: false,
    beta_ends_at: null,
  });
});

test('a Beta license past its end is read-only and shows its timeline', () => {
  expect(licenseStatus(betaRow, true, limits, used, now)).toMatchObject({
    edition: 'beta',
    has_license: true,
    is_valid: true,
    is_read_only: true,
    beta_ends_at: betaRow.beta_ends_at,
    beta_grace_ends_at: betaRow.beta_grace_ends_at,
  });
});

test('a stored key that no longer verifies reads as free and invalid, the key still shown as stored', () => {
  expect(licenseStatus(betaRow, false, { clusters: 1, nodes: 5 }, used, now)).toMatchObject({
    edition: 'free',
    has_license: true,
    is_valid: false,
    key_prefix: 'SHP-BE',
    licensee: null,
    is_read_only: false,
    beta_ends_at: null,
  });
});

test('an expired license is invalid but keeps its edition', () => {
  const expired = { ...betaRow, edition: 'standard' as const, beta_ends_at: null, expires_at: days(-2) };
  expect(licenseStatus(expired, true, limits, used, now)).toMatchObject({
    edition: 'standard',
    is_expired: true,
    is_valid: false,
    is_read_only: false,
    warnings: [expect.objectContaining({ type: 'expired' })],
  });
});
