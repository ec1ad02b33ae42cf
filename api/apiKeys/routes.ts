import { hash as bcryptHash } from '@node-rs/bcrypt';
import type { Knex } from 'knex';
import type { CallerPrincipal } from '../../core/auth/principal';
import { apiKeyLookupPrefix, newApiKeyToken } from '../../core/auth/tokens';
import { recordAudit, RefusedAction } from '../../core/audit/store';
import { ApiError, conflict, invalid, notFound } from '../../core/errors';
import { defineRoute } from '../http/route';
import { apiKeySchema, createApiKeySchema, keyIdParams } from './schemas';
import {
  countActiveKeysOfUser,
  insertApiKey,
  listApiKeys,
  lockUserForKeyCreation,
  revokeApiKey,
} from '../../core/apiKeys/store';

const BCRYPT_COST = 12;
export const MAX_ACTIVE_KEYS_PER_USER = 25;

async function revoke(db: Knex, auth: CallerPrincipal, id: string) {
  const event = { eventType: 'api_key.revoked', action: 'revoke', targetType: 'api_key', targetId: id };
  const key = await revokeApiKey(db, id);
  if (!key) throw new RefusedAction(notFound('API key'), event);
  await recordAudit(db, auth, event);
  return key;
}

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/api-keys',
    tag: 'Admin',
    access: 'admin:read',
    summary: 'List API keys (prefixes only, never tokens)',
    responses: {
      200: {
        description: '`{keys}`',
        schema: { type: 'object', properties: { keys: { type: 'array', items: apiKeySchema } } },
      },
    },
    handler: async ({ db }) => ({ keys: await listApiKeys(db) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/api-keys',
    tag: 'Admin',
    access: 'admin:write',
    summary: 'Create an API key; the full token is in this response only',
    body: createApiKeySchema,
    responses: { 201: { description: '`{id, name, token, scopes}`' } },
    handler: async ({ db, auth, body }) => {
      if (body.expires_at && new Date(body.expires_at).getTime() <= Date.now()) {
        throw invalid('expires_at must be in the future', [{ field: 'body.expires_at', message: 'is in the past' }]);
      }
      const refused = {
        eventType: 'api_key.created',
        action: 'create',
        targetType: 'api_key',
        metadata: { name: body.name, scopes: body.scopes },
      };
      // A key can do no more than its creator: otherwise admin:write would mint any scope.
      const beyond = body.scopes.filter((scope) => !auth.permissions.has(scope));
      if (beyond.length) {
        const details = beyond.map((scope) => ({ field: 'body.scopes', message: `you do not hold ${scope}` }));
        throw new RefusedAction(
          new ApiError('FORBIDDEN', 'A key may only carry scopes its creator holds', details),
          refused,
        );
      }
      await lockUserForKeyCreation(db, auth.userId);
      if ((await countActiveKeysOfUser(db, auth.userId)) >= MAX_ACTIVE_KEYS_PER_USER) {
        throw new RefusedAction(
          conflict(`At most ${MAX_ACTIVE_KEYS_PER_USER} active API keys per user; revoke one first`),
          refused,
        );
      }
      const token = newApiKeyToken();
      const id = await insertApiKey(db, {
        tenantId: auth.tenantId,
        userId: auth.userId,
        createdByKeyId: auth.kind === 'api_key' ? auth.apiKeyId : null,
        name: body.name,
        description: body.description ?? '',
        prefix: apiKeyLookupPrefix(token),
        tokenHash: await bcryptHash(token, { cost: BCRYPT_COST }),
        scopes: [...body.scopes],
        expiresAt: body.expires_at ?? null,
      });
      await recordAudit(db, auth, {
        eventType: 'api_key.created',
        action: 'create',
        targetType: 'api_key',
        targetId: id,
        metadata: { name: body.name, scopes: body.scopes },
      });
      return { id, name: body.name, token, scopes: body.scopes };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/admin/api-keys/{id}',
    tag: 'Admin',
    access: 'admin:write',
    summary: 'Revoke an API key (it fails on the very next request, in every API process)',
    params: keyIdParams,
    responses: { 204: { description: 'Revoked' } },
    handler: async ({ db, auth, params }) => {
      await revoke(db, auth, params.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/api-keys/{id}/revoke',
    tag: 'Admin',
    access: 'admin:write',
    summary: 'Revoke an API key (alternative form); answers with the revoked key',
    params: keyIdParams,
    responses: { 200: { description: 'The revoked key', schema: apiKeySchema } },
    handler: ({ db, auth, params }) => revoke(db, auth, params.id),
  }),
];
