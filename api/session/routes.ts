import { defineRoute } from '../http/route';
import { getProfile } from '../../core/users/store';

export const sessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    tag: 'Users',
    access: 'authenticated',
    summary: 'The current user: profile, tenant, teams, identity-provider groups and roles',
    responses: { 200: { description: 'Current user' } },
    handler: async ({ db, auth }) => {
      // An API key acts with its scopes only, not its owner's identity-provider groups.
      const groups = auth.kind === 'user' ? auth.groups : [];
      const { teams, ...user } = await getProfile(db, auth.userId, groups);
      return {
        ...user,
        tenant_id: auth.tenantId,
        teams,
        groups,
        roles: auth.kind === 'user' ? auth.roles : [],
        permissions: [...auth.permissions].sort(),
        ...(auth.kind === 'api_key' && { api_key_id: auth.apiKeyId }),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/cli/status',
    tag: 'Users',
    access: 'authenticated',
    summary: 'Whether the presented credentials are valid, for whom, and until when',
    responses: { 200: { description: 'Authentication status' } },
    handler: async ({ db, auth }) => {
      const user = await db('users').where({ id: auth.userId }).first('email', 'name');
      const expiresAt =
        auth.kind === 'user'
          ? auth.expiresAt
          : ((await db('api_keys').where({ id: auth.apiKeyId }).first('expires_at'))?.expires_at ?? null);
      return {
        authenticated: true,
        user: { email: user.email, name: user.name, tenant_id: auth.tenantId },
        expires_at: expiresAt ? new Date(expiresAt).toISOString() : null,
      };
    },
  }),
];
