import { randomBytes } from 'node:crypto';
import { Keyring, parseEncryptionKeys, SealedDataError } from '../../core/crypto/keyring';
import {
  changedAddresses,
  hasPlainSecrets,
  isSecretKey,
  keepOmittedSecrets,
  maskSecrets,
  openSecrets,
  sealSecrets,
} from '../../core/crypto/secretConfig';

const keyring = (keys = `k1:${randomBytes(32).toString('base64')}`) => new Keyring(parseEncryptionKeys(keys));

const config = {
  base_url: 'https://vcs.example.test',
  Token: 'tok-1',
  API_KEY: 'key-1',
  auth: { username: 'bot', password: 'pw-1', 'Client-Secret': 'cs-1' },
  hooks: [{ url: 'https://hooks.example.test', signing_secret: 'hs-1' }],
  credentials: { user: 'u', pass: 'p' },
  token_url: 'https://idp.example.test/token',
  max_tokens: 5,
};

test('secret keys are recognised whatever their case, separators or prefix', () => {
  const secret = [
    'token',
    'Token',
    'API_KEY',
    'apiKey',
    'api-key',
    'client_secret',
    'PRIVATE_KEY',
    'access_token',
    'db_password',
  ];
  for (const key of [...secret, 'Authorization']) {
    expect([key, isSecretKey(key)]).toEqual([key, true]);
  }
  for (const key of ['base_url', 'token_url', 'max_tokens', 'organization', 'username', 'secret_name']) {
    expect([key, isSecretKey(key)]).toEqual([key, false]);
  }
});

test('masking drops every secret, nested ones and those in arrays too, and names each by its path', () => {
  const { config: masked, secrets } = maskSecrets(config);
  expect(masked).toEqual({
    base_url: 'https://vcs.example.test',
    auth: { username: 'bot' },
    hooks: [{ url: 'https://hooks.example.test' }],
    token_url: 'https://idp.example.test/token',
    max_tokens: 5,
  });
  expect(secrets.sort()).toEqual([
    'API_KEY',
    'Token',
    'auth.Client-Secret',
    'auth.password',
    'credentials',
    'hooks.0.signing_secret',
  ]);
});

test('sending back what was read keeps every stored secret, nested ones included; what the client sets wins', () => {
  const { config: read } = maskSecrets(config);
  const { config: merged, kept } = keepOmittedSecrets(config, {
    ...read,
    auth: { ...(read.auth as object), password: 'pw-2' },
  });
  expect(merged).toEqual({ ...config, auth: { ...config.auth, password: 'pw-2' } });
  expect(kept.sort()).toEqual(['API_KEY', 'Token', 'auth.Client-Secret', 'credentials', 'hooks.0.signing_secret']);
});

test('a secret whose enclosing object the replacement drops is dropped with it', () => {
  const { config: merged, kept } = keepOmittedSecrets(config, { base_url: config.base_url });
  expect(merged).toEqual({
    base_url: config.base_url,
    Token: 'tok-1',
    API_KEY: 'key-1',
    credentials: config.credentials,
  });
  expect(kept.sort()).toEqual(['API_KEY', 'Token', 'credentials']);
});

test('changed addresses are found at any depth, added and removed ones too', () => {
  expect(changedAddresses(config, config)).toEqual([]);
  expect(changedAddresses(config, { ...config, base_url: 'https://evil.example.test' })).toEqual(['base_url']);
  expect(changedAddresses(config, { ...config, hooks: [{ url: 'https://elsewhere.test' }] })).toEqual(['hooks.0.url']);
  expect(changedAddresses({ name: 'x' }, { name: 'x', api_host: 'h' })).toEqual(['api_host']);
});

test('sealed secrets hold no plaintext, open to the original values (any JSON), and only for their tenant', () => {
  const ring = keyring();
  const sealed = sealSecrets(ring, config, 'tenant-a');
  const text = JSON.stringify(sealed);
  for (const secret of ['tok-1', 'key-1', 'pw-1', 'cs-1', 'hs-1', '"pass"']) expect(text).not.toContain(secret);
  expect(sealed.Token).toMatch(/^sealed:v1:k1:[A-Za-z0-9+/]+=*$/);
  expect(maskSecrets(sealed)).toEqual(maskSecrets(config));
  expect(openSecrets(ring, sealed, 'tenant-a')).toEqual(config);
  expect(() => openSecrets(ring, sealed, 'tenant-b')).toThrow(SealedDataError);
});

test('a secret stored before sealing existed opens as it is, and is told apart from sealed ones', () => {
  const ring = keyring();
  expect(openSecrets(ring, { token: 'plain-legacy' }, 'tenant-a')).toEqual({ token: 'plain-legacy' });
  expect(hasPlainSecrets({ auth: { password: 'plain' } })).toBe(true);
  expect(hasPlainSecrets(sealSecrets(ring, config, 'tenant-a'))).toBe(false);
  expect(hasPlainSecrets({ base_url: 'https://no-secrets.test' })).toBe(false);
});
