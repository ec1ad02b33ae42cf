import type { Keyring } from './keyring';

// Configs that hold credentials (an integration's token, a nested `auth: {password}`): the
// values of secret-named keys, at any depth, are write-only to clients and sealed at rest,
// bound to their tenant. Everything else in the config stays plain, readable and queryable.

export type ConfigObject = Record<string, unknown>;

/** Key names that hold credentials, compared without case, `_` or `-`, and as suffixes (`access_token`). */
const SECRET_SUFFIXES = [
  'token',
  'secret',
  'password',
  'passphrase',
  'apikey',
  'privatekey',
  'authorization',
  'credentials',
];
/** Key names that say where a request goes (`base_url`, `webhook_url`, `api_host`). */
const ADDRESS_SUFFIXES = ['url', 'uri', 'host', 'endpoint'];

const normalized = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');
const endsWithAny = (suffixes: string[]) => (key: string) =>
  suffixes.some((suffix) => normalized(key).endsWith(suffix));

export const isSecretKey = endsWithAny(SECRET_SUFFIXES);
const isAddressKey = endsWithAny(ADDRESS_SUFFIXES);

const SEALED = /^sealed:v1:([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/]+={0,2})$/;

const isPlainObject = (value: unknown): value is ConfigObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const childOf = (node: unknown, segment: string | number): unknown =>
  isPlainObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[segment] : undefined;

type Path = (string | number)[];
const OMIT = Symbol('omit');

/** Rebuilds `value` with each secret-keyed value replaced by what `onSecret` returns (OMIT drops it). */
function mapSecrets(value: unknown, onSecret: (secret: unknown, path: Path) => unknown, path: Path = []): unknown {
  if (Array.isArray(value)) return value.map((item, index) => mapSecrets(item, onSecret, [...path, index]));
  if (!isPlainObject(value)) return value;
  const result: ConfigObject = {};
  for (const [key, item] of Object.entries(value)) {
    const mapped = isSecretKey(key) ? onSecret(item, [...path, key]) : mapSecrets(item, onSecret, [...path, key]);
    if (mapped !== OMIT) result[key] = mapped;
  }
  return result;
}

/** Every secret's path and value. */
function secretsOf(config: ConfigObject): { path: Path; value: unknown }[] {
  const found: { path: Path; value: unknown }[] = [];
  mapSecrets(config, (value, path) => found.push({ path, value }));
  return found;
}

/** Every address's path (dotted) and value, secrets left out. */
function addressesOf(value: unknown, path: Path = [], found = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value)) value.forEach((item, index) => addressesOf(item, [...path, index], found));
  if (!isPlainObject(value)) return found;
  for (const [key, item] of Object.entries(value)) {
    if (isSecretKey(key)) continue;
    if (isAddressKey(key) && !isPlainObject(item) && !Array.isArray(item))
      found.set([...path, key].join('.'), JSON.stringify(item));
    else addressesOf(item, [...path, key], found);
  }
  return found;
}

/** The response form: the config without its secrets, and the dotted paths of those that are set. */
export function maskSecrets(config: ConfigObject): { config: ConfigObject; secrets: string[] } {
  const secrets: string[] = [];
  const masked = mapSecrets(config, (_value, path) => {
    secrets.push(path.join('.'));
    return OMIT;
  }) as ConfigObject;
  return { config: masked, secrets };
}

/**
 * A replacement config keeps the stored secrets it leaves out wherever it still has the object
 * that held them, so a client can send back what it read (which never holds secrets) without
 * erasing credentials. `kept` names them.
 */
export function keepOmittedSecrets(
  stored: ConfigObject,
  replacement: ConfigObject,
): { config: ConfigObject; kept: string[] } {
  const config = structuredClone(replacement);
  const kept: string[] = [];
  for (const { path, value } of secretsOf(stored)) {
    const parent = path.slice(0, -1).reduce(childOf, config);
    const key = path[path.length - 1] as string;
    if (!isPlainObject(parent) || key in parent) continue;
    parent[key] = value;
    kept.push(path.join('.'));
  }
  return { config, kept };
}

/** Dotted paths of the addresses (`*_url`, `*_host`, …) that differ between two configs. */
export function changedAddresses(before: ConfigObject, after: ConfigObject): string[] {
  const [old, next] = [addressesOf(before), addressesOf(after)];
  return [...new Set([...old.keys(), ...next.keys()])].filter((path) => old.get(path) !== next.get(path));
}

/** Each secret value (any JSON) becomes `sealed:v1:<keyId>:<base64>`, bound to the tenant. */
export function sealSecrets(keyring: Keyring, config: ConfigObject, tenantId: string): ConfigObject {
  return mapSecrets(config, (value) => {
    const { keyId, data } = keyring.seal(Buffer.from(JSON.stringify(value)), Buffer.from(tenantId));
    return `sealed:v1:${keyId}:${data.toString('base64')}`;
  }) as ConfigObject;
}

const isSealed = (value: unknown) => typeof value === 'string' && SEALED.test(value);

/** Whether a config still holds a secret in the clear (stored before sealing existed). */
export const hasPlainSecrets = (config: ConfigObject) => secretsOf(config).some(({ value }) => !isSealed(value));

/**
 * The config with its secrets opened, for the code that uses them. A secret stored before
 * sealing existed (see the migration that seals them) is still plain and passes as it is.
 * Throws SealedDataError when a key is missing or the value was altered or moved to another tenant.
 */
export function openSecrets(keyring: Keyring, config: ConfigObject, tenantId: string): ConfigObject {
  return mapSecrets(config, (value) => {
    const sealed = typeof value === 'string' && SEALED.exec(value);
    if (!sealed) return value;
    const opened = keyring.open({ keyId: sealed[1], data: Buffer.from(sealed[2], 'base64') }, Buffer.from(tenantId));
    return JSON.parse(opened.toString('utf8'));
  }) as ConfigObject;
}
