import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readOrCreateKeyFile } from '../../core/crypto/keyFile';
import { createKeyring, Keyring, parseEncryptionKeys, SealedDataError } from '../../core/crypto/keyring';

const entry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const scratch = () => mkdtempSync(path.join(tmpdir(), 'shipyard-keyring-'));

test('sealed data opens to the plaintext, and only with the context it was sealed for', () => {
  const keyring = new Keyring(parseEncryptionKeys(entry('k1')));
  const sealed = keyring.seal(Buffer.from('tenant data'), Buffer.from('tenant-a'));
  expect(sealed.keyId).toBe('k1');
  expect(sealed.data.toString('latin1')).not.toContain('tenant data');
  expect(keyring.open(sealed, Buffer.from('tenant-a')).toString()).toBe('tenant data');
  expect(() => keyring.open(sealed, Buffer.from('tenant-b'))).toThrow(SealedDataError);
});

test('rotation: with a new key put first, data sealed with the old key still opens, and new data uses the new key id', () => {
  const [oldKey, newKey] = [entry('2025-01'), entry('2025-07')];
  const before = new Keyring(parseEncryptionKeys(oldKey)).seal(Buffer.from('old secret'));
  const rotated = new Keyring(parseEncryptionKeys(`${newKey}, ${oldKey}`));
  expect(rotated.open(before).toString()).toBe('old secret');
  expect(rotated.seal(Buffer.from('new secret')).keyId).toBe('2025-07');
});

test('an unknown key id and altered data are clear errors', () => {
  const sealed = new Keyring(parseEncryptionKeys(entry('retired'))).seal(Buffer.from('x'));
  const keyring = new Keyring(parseEncryptionKeys(entry('current')));
  expect(() => keyring.open(sealed)).toThrow(
    'sealed with key "retired", which is not among the configured encryption keys',
  );
  const own = keyring.seal(Buffer.from('x'));
  own.data[own.data.length - 1] ^= 1;
  expect(() => keyring.open(own)).toThrow(/does not open with key "current": it was altered/);
});

test('a malformed SHIPYARD_ENCRYPTION_KEYS entry fails naming the entry, never showing key material', () => {
  const material = randomBytes(16).toString('base64');
  const cases: [string, RegExp][] = [
    [`${entry('a')},short:${material}`, /entry 2 \("short"\): the key must be 32 bytes in base64/],
    [`${entry('a')},${entry('b')},${randomBytes(32).toString('base64')}`, /entry 3 must be keyId:base64/],
    [`bad id!:${randomBytes(32).toString('base64')}`, /entry 1 must be keyId:base64/],
    [`k:${'*'.repeat(44)}`, /entry 1 \("k"\): the key must be 32 bytes/],
    [`${entry('same')},${entry('same')}`, /names key id "same" twice/],
    [' , ', /holds no key/],
  ];
  for (const [raw, message] of cases) {
    expect(() => createKeyring({ encryptionKeys: raw, production: true, dataDir: scratch() })).toThrow(message);
  }
  const shown = expect.objectContaining({ message: expect.not.stringContaining(material) });
  expect(() => parseEncryptionKeys(`short:${material}`)).toThrow(shown);
});

test('in production, no SHIPYARD_ENCRYPTION_KEYS stops the start instead of creating a key', () => {
  const dataDir = scratch();
  expect(() => createKeyring({ production: true, dataDir })).toThrow(
    /NODE_ENV=production requires SHIPYARD_ENCRYPTION_KEYS/,
  );
  expect(() => statSync(path.join(dataDir, 'crypto'))).toThrow();
});

test('outside production, a dev key is created on first use (mode 0600) and every later keyring of that data folder shares it', () => {
  const dataDir = scratch();
  const first = createKeyring({ production: false, dataDir });
  const file = path.join(dataDir, 'crypto', 'dev-encryption-key');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file, 'utf8')).toMatch(/^dev-[0-9a-f]{8}:[A-Za-z0-9+/]{43}=$/);
  const second = createKeyring({ production: false, dataDir });
  expect(second.currentKeyId).toBe(first.currentKeyId);
  expect(second.open(first.seal(Buffer.from('shared'))).toString()).toBe('shared');
});

test('two processes creating the key file at once agree on the one written first', () => {
  const file = path.join(scratch(), 'keys', 'key');
  // The other process writes its key between this one's failed read and its own write.
  const ours = readOrCreateKeyFile(file, () => {
    readOrCreateKeyFile(file, () => 'theirs');
    return 'ours';
  });
  expect(ours).toBe('theirs');
  expect(readOrCreateKeyFile(file, () => 'later')).toBe('theirs');
  writeFileSync(file, 'replaced');
  expect(readOrCreateKeyFile(file, () => 'again')).toBe('replaced');
});
