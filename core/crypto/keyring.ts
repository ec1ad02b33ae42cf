import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import path from 'node:path';
import { readOrCreateKeyFile } from './keyFile';

// core/crypto: what keeps tenant data unreadable outside the processes that work on it. This
// keyring (AES-256-GCM under named keys, so keys can rotate) serves the Temporal payload codec
// (./payloadCodec.ts: workflow history) and the sealing of secrets at rest (./secretConfig.ts).

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const NO_CONTEXT = Buffer.alloc(0);

/** What the keyring needs of the configuration (core/config.ts). */
export interface KeyringSettings {
  /** `keyId:base64(32 bytes)` entries, comma-separated; the first encrypts. */
  encryptionKeys?: string;
  production: boolean;
  dataDir: string;
}

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** Ciphertext and the id of the key that made it: `data` is IV ‖ ciphertext ‖ GCM tag. */
export interface Sealed {
  keyId: string;
  data: Buffer;
}

/** Sealed data that cannot be opened: a key this keyring does not hold, or data that was altered. */
export class SealedDataError extends Error {}

/**
 * Keys by id. The first key seals; every key opens, so a new key can be put first while data
 * sealed with the old ones stays readable until it is re-sealed or expires.
 */
export class Keyring {
  private readonly keys: ReadonlyMap<string, Buffer>;
  readonly currentKeyId: string;

  constructor(keys: EncryptionKey[]) {
    if (!keys.length) throw new Error('a keyring needs at least one key');
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
    this.currentKeyId = keys[0].id;
  }

  /** `context` (additional authenticated data) binds the result: it opens only with the same context. */
  seal(plaintext: Uint8Array, context: Uint8Array = NO_CONTEXT): Sealed {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId)!, iv).setAAD(context);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId: this.currentKeyId, data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]) };
  }

  open({ keyId, data }: Sealed, context: Uint8Array = NO_CONTEXT): Buffer {
    const key = this.keys.get(keyId);
    if (!key)
      throw new SealedDataError(`sealed with key "${keyId}", which is not among the configured encryption keys`);
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new SealedDataError(`sealed data is too short (${data.length} bytes)`);
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES)).setAAD(context);
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SealedDataError(
        `sealed data does not open with key "${keyId}": it was altered or sealed for something else`,
      );
    }
  }
}

/**
 * `keyId:base64` entries, comma-separated. A bad entry is named by its position and key id,
 * never by its key material, since the message ends up in logs.
 */
export function parseEncryptionKeys(raw: string, source = 'SHIPYARD_ENCRYPTION_KEYS'): EncryptionKey[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (!entries.length) throw new Error(`${source} holds no key`);
  const keys = entries.map((entry, index) => {
    const separator = entry.indexOf(':');
    const id = separator > 0 ? entry.slice(0, separator) : '';
    const encoded = entry.slice(separator + 1);
    const name = `${source} entry ${index + 1}${KEY_ID.test(id) ? ` ("${id}")` : ''}`;
    if (!KEY_ID.test(id))
      throw new Error(`${name} must be keyId:base64, the key id made of letters, digits, ".", "_" or "-" (at most 64)`);
    const key = Buffer.from(encoded, 'base64');
    if (!BASE64.test(encoded) || key.length !== KEY_BYTES) {
      throw new Error(`${name}: the key must be ${KEY_BYTES} bytes in base64 (e.g. from \`openssl rand -base64 32\`)`);
    }
    return { id, key };
  });
  const repeated = keys.find((key, index) => keys.findIndex((other) => other.id === key.id) !== index);
  if (repeated) throw new Error(`${source} names key id "${repeated.id}" twice`);
  return keys;
}

/**
 * The process's keyring: the configured keys; with none, outside production, a development key
 * created on first use in the data folder (in the same `keyId:base64` form, so it can be moved
 * into SHIPYARD_ENCRYPTION_KEYS later). In production a missing or malformed setting stops the
 * process at start.
 */
export function createKeyring(settings: KeyringSettings): Keyring {
  if (settings.encryptionKeys) return new Keyring(parseEncryptionKeys(settings.encryptionKeys));
  if (settings.production) {
    throw new Error(
      'NODE_ENV=production requires SHIPYARD_ENCRYPTION_KEYS (keyId:base64 of 32 random bytes, e.g. "k1:$(openssl rand -base64 32)"): ' +
        'workflow payloads and integration secrets are encrypted with it',
    );
  }
  const file = path.join(settings.dataDir, 'crypto', 'dev-encryption-key');
  const entry = readOrCreateKeyFile(
    file,
    () => `dev-${randomBytes(4).toString('hex')}:${randomBytes(KEY_BYTES).toString('base64')}`,
  );
  return new Keyring(parseEncryptionKeys(entry, file));
}
