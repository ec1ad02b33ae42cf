import { createApiKey, revokeApiKeyAudited } from '../../core/apiKeys/commands';
import { listApiKeys } from '../../core/apiKeys/store';
import { shapeDPage, shapeDWindow } from '../http/pagination';
import { defineRoute, linksTo } from '../http/route';
import {
  apiKeyListQuery,
  apiKeyListSchema,
  apiKeySchema,
  createApiKeySchema,
  createdApiKeySchema,
  keyIdParams,
} from './schemas';

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/api-keys',
    tag: 'Admin',
    access: 'admin:read',
    summary:
      'List API keys, newest first (prefixes only, never tokens): the usable ones unless `status` asks for expired, revoked or all',
    query: apiKeyListQuery,
    responses: { 200: { description: '`{keys, next_cursor}`', schema: apiKeyListSchema } },
    handler: async ({ db, query }) => {
      const window = shapeDWindow(query);
      const page = shapeDPage(await listApiKeys(db, query.status, window), window);
      return { keys: page.items, next_cursor: page.next_cursor };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/admin/api-keys',
    tag: 'Admin',
    access: 'admin:write',
    summary: 'Create an API key; the full token is in this response only',
    body: createApiKeySchema,
    responses: {
      201: {
        description: '`{id, name, token, scopes}`',
        schema: createdApiKeySchema,
        links: linksTo(['POST /admin/api-keys/{id}/revoke', 'DELETE /admin/api-keys/{id}'], {
          id: '$response.body#/id',
        }),
      },
      400: {
        description:
          'The body is invalid, expires_at is past, or the api_key_max_lifetime policy refuses it (no or a too-late expires_at)',
      },
    },
    handler: async ({ db, auth, body, deps }) =>
      createApiKey(
        db,
        auth,
        { name: body.name, description: body.description, scopes: body.scopes, expiresAt: body.expires_at },
        await deps.policies.read(db, auth.tenantId),
      ),
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
      await revokeApiKeyAudited(db, auth, params.id);
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
    handler: ({ db, auth, params }) => revokeApiKeyAudited(db, auth, params.id),
  }),
];
