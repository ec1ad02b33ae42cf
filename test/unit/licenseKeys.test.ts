import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config';
import { ApiError } from '../../core/errors';
import {
  devLicenseKeyPair,
  licensePublicKey,
  signLicenseKey,
  verifyLicenseKey,
  type LicensePayload,
} from '../../core/license/keys';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const payload: LicensePayload = {
  edition: 'standard',
  type: 'selfhosted',
  clusters: 5,
  nodes: 0,
  licensee: 'Acme',
  issued_at: '2026-11-01T00:00:00.000Z',
  expires_at: '2027-12-31T23:59:59.000Z',
};

/** The INVALID_REQUEST message verifying `key` gives. */
function refusal(key: string): string {
  try {
    verifyLicenseKey(key, publicKey);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error('the key verified');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

test('a signed key verifies, its payload read back with its prefix', () => {
  const key = signLicenseKey(payload, privateKey);
  expect(key).toMatch(/^SHP-ST-[\w-]+\.[\w-]+$/);
  expect(verifyLicenseKey(key, publicKey)).toEqual({ payload, keyPrefix: 'SHP-ST' });
});

test('each edition has its prefix: BE beta, ST standard, AG airgapped', () => {
  for (const [edition, prefix] of [
    ['beta', 'SHP-BE'],
    ['standard', 'SHP-ST'],
    ['airgapped', 'SHP-AG'],
  ] as const) {
    expect(verifyLicenseKey(signLicenseKey({ ...payload, edition }, privateKey), publicKey).keyPrefix).toBe(prefix);
  }
});

test('a key signed by another private key (forged) is refused', () => {
  const forger = generateKeyPairSync('ed25519').privateKey;
  expect(refusal(signLicenseKey(payload, forger))).toMatch(/signature does not verify/);
});

test('a payload changed after signing (more clusters) is refused', () => {
  const [head, signature] = signLicenseKey(payload, privateKey).split('.');
  const tampered = `SHP-ST-${b64({ ...payload, clusters: 500 })}.${signature}`;
  expect(head).not.toBe(tampered.split('.')[0]);
  expect(refusal(tampered)).toMatch(/signature does not verify/);
});

test('a prefix naming another edition than the signed payload is refused, whichever way round', () => {
  const standard = signLicenseKey(payload, privateKey);
  expect(refusal(standard.replace(/^SHP-ST-/, 'SHP-AG-'))).toMatch(
    /prefix SHP-AG does not match its signed edition \(standard\)/,
  );
  const beta = signLicenseKey({ ...payload, edition: 'beta' }, privateKey);
  expect(refusal(beta.replace(/^SHP-BE-/, 'SHP-ST-'))).toMatch(/does not match its signed edition \(beta\)/);
});

test('malformed keys are refused: wrong shape, unknown prefix, no signature, a payload that is not a license', () => {
  expect(refusal('')).toMatch(/malformed/);
  expect(refusal('not-a-key')).toMatch(/malformed/);
  expect(refusal(`SHP-XX-${b64(payload)}.abc`)).toMatch(/malformed/);
  expect(refusal(`SHP-ST-${b64(payload)}`)).toMatch(/malformed/);
  expect(refusal('x'.repeat(10_000))).toMatch(/malformed/);
  const signed = (part: string) => `SHP-ST-${part}.${sign(null, Buffer.from(part), privateKey).toString('base64url')}`;
  expect(refusal(signed(Buffer.from('not json').toString('base64url')))).toMatch(/payload is malformed/);
  expect(refusal(signed(b64({ ...payload, edition: 'gold' })))).toMatch(/payload is malformed/);
  expect(refusal(signed(b64({ ...payload, clusters: -1 })))).toMatch(/payload is malformed/);
  expect(refusal(signed(b64({ ...payload, issued_at: 'yesterday' })))).toMatch(/payload is malformed/);
});

describe('the verifying key', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'license-keys-'));

  test('without a configured key, the dev key pair under the data folder verifies what it signs', () => {
    const config = loadConfig({ SHIPYARD_DATA: dataDir() });
    const key = signLicenseKey(payload, devLicenseKeyPair(config).privateKey);
    expect(verifyLicenseKey(key, licensePublicKey(config)).payload).toEqual(payload);
  });

  test('a configured public key replaces the dev key', () => {
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const config = loadConfig({ SHIPYARD_DATA: dataDir(), SHIPYARD_LICENSE_PUBLIC_KEY: pem });
    expect(verifyLicenseKey(signLicenseKey(payload, privateKey), licensePublicKey(config)).payload).toEqual(payload);
  });

  test('production refuses to start without a configured key, and with the dev key configured', () => {
    const data = dataDir();
    expect(() => licensePublicKey(loadConfig({ SHIPYARD_DATA: data, NODE_ENV: 'production' }))).toThrow(
      /requires SHIPYARD_LICENSE_PUBLIC_KEY/,
    );
    const devPem = devLicenseKeyPair(loadConfig({ SHIPYARD_DATA: data }))
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    expect(() =>
      licensePublicKey(
        loadConfig({ SHIPYARD_DATA: data, NODE_ENV: 'production', SHIPYARD_LICENSE_PUBLIC_KEY: devPem }),
      ),
    ).toThrow(/refuses the development license key/);
    const realPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(() =>
      licensePublicKey(
        loadConfig({ SHIPYARD_DATA: data, NODE_ENV: 'production', SHIPYARD_LICENSE_PUBLIC_KEY: realPem }),
      ),
    ).not.toThrow();
  });
});
