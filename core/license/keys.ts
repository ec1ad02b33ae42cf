import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readOrCreateKeyFile } from '../crypto/keyFile';
import { invalid } from '../errors';
import type { Config } from '../config';
import type { Edition } from './editions';

// License keys: `SHP-<BE|ST|AG>-<base64url(JSON payload)>.<base64url(Ed25519 signature)>`, the
// signature over the payload part exactly as it appears in the key. The edition comes from the
// signed payload; the prefix only has to agree with it.

export type LicensedEdition = Exclude<Edition, 'free'>;
export const LICENSE_TYPES = ['selfhosted', 'saas', 'partner'] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];

/** The prefix of each edition's keys. */
export const EDITION_PREFIX: Record<LicensedEdition, string> = { beta: 'BE', standard: 'ST', airgapped: 'AG' };

/** What a key's signed payload says. */
export interface LicensePayload {
  edition: LicensedEdition;
  type: LicenseType;
  /** 0: the edition's own count. */
  clusters: number;
  /** 0: the edition's own count. */
  nodes: number;
  licensee: string;
  issued_at: string;
  expires_at: string | null;
}

/** A verified key: its payload and the prefix it was presented with (`SHP-ST`). */
export interface VerifiedLicense {
  payload: LicensePayload;
  keyPrefix: string;
}

const KEY_SHAPE = /^(SHP-(BE|ST|AG))-([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
/** Far above any real key; a longer one is refused before it is decoded. */
const KEY_MAX_LENGTH = 4096;

const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 1e6;
const isDate = (value: unknown) => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/** The payload's fields, checked; undefined when any is missing or malformed. */
function payloadOf(json: unknown): LicensePayload | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const p = json as Record<string, unknown>;
  const ok =
    typeof p.edition === 'string' &&
    p.edition in EDITION_PREFIX &&
    (p.type === undefined || (LICENSE_TYPES as readonly unknown[]).includes(p.type)) &&
    (p.clusters === undefined || isCount(p.clusters)) &&
    (p.nodes === undefined || isCount(p.nodes)) &&
    typeof p.licensee === 'string' &&
    p.licensee.length > 0 &&
    isDate(p.issued_at) &&
    (p.expires_at === undefined || p.expires_at === null || isDate(p.expires_at));
  if (!ok) return undefined;
  return {
    edition: p.edition as LicensedEdition,
    type: (p.type as LicenseType | undefined) ?? 'selfhosted',
    clusters: (p.clusters as number | undefined) ?? 0,
    nodes: (p.nodes as number | undefined) ?? 0,
    licensee: p.licensee as string,
    issued_at: new Date(p.issued_at as string).toISOString(),
    expires_at: p.expires_at ? new Date(p.expires_at as string).toISOString() : null,
  };
}

/**
 * Verifies a license key with `publicKey`. A malformed key, a signature that does not verify, or
 * a prefix naming another edition than the signed payload is an INVALID_REQUEST naming which.
 */
export function verifyLicenseKey(key: string, publicKey: KeyObject): VerifiedLicense {
  const match = key.length <= KEY_MAX_LENGTH ? KEY_SHAPE.exec(key.trim()) : null;
  if (!match) throw invalid('license_key is malformed: expected SHP-<BE|ST|AG>-<payload>.<signature>');
  const [, keyPrefix, prefixCode, payloadPart, signaturePart] = match;
  if (!verify(null, Buffer.from(payloadPart), publicKey, Buffer.from(signaturePart, 'base64url')))
    throw invalid('license_key signature does not verify');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8'));
  } catch {
    json = undefined;
  }
  const payload = payloadOf(json);
  if (!payload) throw invalid('license_key payload is malformed');
  if (EDITION_PREFIX[payload.edition] !== prefixCode)
    throw invalid(`license_key prefix ${keyPrefix} does not match its signed edition (${payload.edition})`);
  return { payload, keyPrefix };
}

/** Whether `key` verifies with `publicKey` (a stored key read back). */
export function verifiedOrUndefined(key: string, publicKey: KeyObject): VerifiedLicense | undefined {
  try {
    return verifyLicenseKey(key, publicKey);
  } catch {
    return undefined;
  }
}

/** Signs `payload` into a key with `privateKey` (the CLI, tests). */
export function signLicenseKey(payload: LicensePayload, privateKey: KeyObject): string {
  const payloadPart = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = sign(null, Buffer.from(payloadPart), privateKey).toString('base64url');
  return `SHP-${EDITION_PREFIX[payload.edition]}-${payloadPart}.${signature}`;
}

const devKeyPath = (config: Config) => path.join(config.dataDir, 'license', 'dev-license-key.pem');

/**
 * The local development key pair: created on first use under the data folder and shared by the
 * API and the `shipyard license` CLI, as the dev session signing key is.
 */
export function devLicenseKeyPair(config: Config): { privateKey: KeyObject; publicKey: KeyObject } {
  const pem = readOrCreateKeyFile(devKeyPath(config), () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  );
  const privateKey = createPrivateKey(pem);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/**
 * The key license keys are verified with: the configured one, else the dev key. In production
 * a dev key would let whoever can read the data folder (or run the CLI) mint any license, so
 * the start is refused without a configured key, and with one equal to the dev key.
 */
export function licensePublicKey(config: Config): KeyObject {
  const { publicKeyPem } = config.license;
  if (!publicKeyPem) {
    if (config.production)
      throw new Error(
        'NODE_ENV=production requires SHIPYARD_LICENSE_PUBLIC_KEY (the key license keys are signed with)',
      );
    return devLicenseKeyPair(config).publicKey;
  }
  const key = createPublicKey(publicKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('SHIPYARD_LICENSE_PUBLIC_KEY must be an Ed25519 public key');
  if (config.production && isDevKey(config, key))
    throw new Error('NODE_ENV=production refuses the development license key as SHIPYARD_LICENSE_PUBLIC_KEY');
  return key;
}

/** Whether `key` is this data folder's dev key; read only, since creating one is what production must not do. */
function isDevKey(config: Config, key: KeyObject): boolean {
  let pem: string;
  try {
    pem = readFileSync(devKeyPath(config), 'utf8');
  } catch {
    return false;
  }
  return createPublicKey(createPrivateKey(pem)).equals(key);
}
