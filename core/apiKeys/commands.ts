import { hash as bcryptHash } from '@node-rs/bcrypt';
import type { Knex } from 'knex';
import { recordAudit, RefusedAction } from '../audit/store';
import type { Scope } from '../auth/permissions';
import type { CallerPrincipal } from '../auth/principal';
import { apiKeyLookupPrefix, newApiKeyToken } from '../auth/tokens';
import { ApiError, conflict, invalid, notFound } from '../errors';
import { enforceApiKeyLifetime } from '../policies/enforcement';
import type { TenantPolicies } from '../policies/reader';
import { countActiveKeysOfUser, insertApiKey, lockUserForKeyCreation, revokeApiKey } from './store';

const BCRYPT_COST = 12;
export const MAX_ACTIVE_KEYS_PER_USER = 25;

export interface NewApiKey {
  name: string;
  description: string;
  scopes: readonly Scope[];
  expiresAt?: string;
}

/**
 * Creates a key for the caller and returns its token (shown this once). Refused, and audited as
 * a failure, when it would carry a scope the caller does not hold (otherwise `admin:write` would
 * mint any scope), when the caller already has the most active keys a user may have, or when
 * the tenant's api_key_max_lifetime policy refuses its expiry.
 */
export async function createApiKey(db: Knex, auth: CallerPrincipal, key: NewApiKey, policies: TenantPolicies) {
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= Date.now()) {
    throw invalid('expires_at must be in the future', [{ field: 'body.expires_at', message: 'is in the past' }]);
  }
  const event = {
    eventType: 'api_key.created',
    action: 'create',
    targetType: 'api_key',
    metadata: { name: key.name, scopes: key.scopes },
  };
  const beyond = key.scopes.filter((scope) => !auth.permissions.has(scope));
  if (beyond.length) {
    const details = beyond.map((scope) => ({ field: 'body.scopes', message: `you do not hold ${scope}` }));
    throw new RefusedAction(new ApiError('FORBIDDEN', 'A key may only carry scopes its creator holds', details), event);
  }
  try {
    enforceApiKeyLifetime(policies, key.expiresAt);
  } catch (err) {
    throw new RefusedAction(err as ApiError, event);
  }
  await lockUserForKeyCreation(db, auth.userId);
  if ((await countActiveKeysOfUser(db, auth.userId)) >= MAX_ACTIVE_KEYS_PER_USER) {
    throw new RefusedAction(
      conflict(`At most ${MAX_ACTIVE_KEYS_PER_USER} active API keys per user; revoke one first`),
      event,
    );
  }
  const token = newApiKeyToken();
  const id = await insertApiKey(db, {
    tenantId: auth.tenantId,
    userId: auth.userId,
    createdByKeyId: auth.kind === 'api_key' ? auth.apiKeyId : null,
    name: key.name,
    description: key.description,
    prefix: apiKeyLookupPrefix(token),
    tokenHash: await bcryptHash(token, { cost: BCRYPT_COST }),
    scopes: [...key.scopes],
    expiresAt: key.expiresAt ?? null,
  });
  await recordAudit(db, auth, { ...event, targetId: id });
  return { id, name: key.name, token, scopes: [...key.scopes] };
}

/** Revokes a key (it fails on the very next request everywhere) and audits it; 404 for no such key. */
export async function revokeApiKeyAudited(db: Knex, auth: CallerPrincipal, id: string) {
  const event = { eventType: 'api_key.revoked', action: 'revoke', targetType: 'api_key', targetId: id };
  const key = await revokeApiKey(db, id);
  if (!key) throw new RefusedAction(notFound('API key'), event);
  await recordAudit(db, auth, event);
  return key;
}
