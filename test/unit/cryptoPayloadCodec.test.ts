import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { Keyring, parseEncryptionKeys } from '../../core/crypto/keyring';
import { EncryptionCodec } from '../../core/crypto/payloadCodec';

const keyEntry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const codecWith = (keys: string) => new EncryptionCodec(new Keyring(parseEncryptionKeys(keys)));
const metadataText = (payload: Payload) =>
  Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString()]),
  );

test('an encoded payload is binary/encrypted with its key id, holds none of the original, and decodes to it exactly', async () => {
  const codec = codecWith(keyEntry('k1'));
  const original = defaultPayloadConverter.toPayload({ parameters: { service: 'payments-secret' } });
  const [encoded] = await codec.encode([original]);
  expect(metadataText(encoded)).toEqual({ encoding: 'binary/encrypted', 'encryption-key-id': 'k1' });
  expect(Buffer.from(encoded.data!).toString('latin1')).not.toMatch(/payments-secret|json\/plain/);
  const [decoded] = await codec.decode([encoded]);
  expect(defaultPayloadConverter.fromPayload(decoded)).toEqual({ parameters: { service: 'payments-secret' } });
  expect(metadataText(decoded)).toEqual(metadataText(original));
});

test('a payload that is not encrypted passes through decode unchanged', async () => {
  const plain = defaultPayloadConverter.toPayload('written before encryption');
  expect(await codecWith(keyEntry('k1')).decode([plain])).toEqual([plain]);
});

test('after rotation, payloads encoded with the old key decode and new ones carry the new key id', async () => {
  const [oldKey, newKey] = [keyEntry('old'), keyEntry('new')];
  const [fromBefore] = await codecWith(oldKey).encode([defaultPayloadConverter.toPayload('history from before')]);
  const rotated = codecWith(`${newKey},${oldKey}`);
  expect(defaultPayloadConverter.fromPayload((await rotated.decode([fromBefore]))[0])).toBe('history from before');
  const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload('new')]);
  expect(metadataText(fresh)['encryption-key-id']).toBe('new');
});

test('a payload encrypted with a key that is not configured, or without a key id, fails clearly', async () => {
  const [foreign] = await codecWith(keyEntry('elsewhere')).encode([defaultPayloadConverter.toPayload('x')]);
  const codec = codecWith(keyEntry('here'));
  await expect(codec.decode([foreign])).rejects.toThrow(
    'sealed with key "elsewhere", which is not among the configured encryption keys',
  );
  const anonymous = { ...foreign, metadata: { encoding: foreign.metadata!.encoding } };
  await expect(codec.decode([anonymous])).rejects.toThrow('an encrypted payload without encryption-key-id metadata');
});
