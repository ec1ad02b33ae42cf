import { hash, randomBytes } from 'node:crypto';

// Token formats. Both are long random secrets with a fixed prefix that says what they are.
export const API_KEY_PREFIX = 'shp_svc_';
export const AGENT_TOKEN_PREFIX = 'shp_agt_';
const API_KEY_RANDOM_LENGTH = 72;
const AGENT_TOKEN_RANDOM_LENGTH = 64;
/** Characters stored for lookup: `shp_svc_` plus 4 random ones (8 would be the same for every key). */
export const API_KEY_LOOKUP_LENGTH = 12;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random characters from ALPHABET (rejection sampling avoids modulo bias). */
function randomString(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

export const newApiKeyToken = () => API_KEY_PREFIX + randomString(API_KEY_RANDOM_LENGTH);
export const newAgentToken = () => AGENT_TOKEN_PREFIX + randomString(AGENT_TOKEN_RANDOM_LENGTH);
export const apiKeyLookupPrefix = (token: string) => token.slice(0, API_KEY_LOOKUP_LENGTH);
// One-shot: a third of createHash().update().digest()'s cost, paid on every API-key request.
export const sha256 = (value: string) => hash('sha256', value, 'hex');

export const looksLikeApiKey = (token: string) =>
  token.startsWith(API_KEY_PREFIX) && token.length === API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH;
export const looksLikeAgentToken = (token: string) => token.startsWith(AGENT_TOKEN_PREFIX);
