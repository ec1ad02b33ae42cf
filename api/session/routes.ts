import { apiKeyExpiry } from '../../core/apiKeys/store';
import { notFound } from '../../core/errors';
import { findUser, getProfile } from '../../core/users/store';
import { defineRoute } from '../http/route';
import { authStatusSchema, currentUserSchema } from './schemas';

export const sessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    tag: 'Users',
    access: 'authenticated',
    summary: 'The current user: profile, tenant, teams, identity-provider groups and roles',
    responses: { 200: { description: 'Current user', schema: currentUserSchema } },
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
    responses: { 200: { description: 'Authentication status', schema: authStatusSchema } },
    handler: async ({ db, auth }) => {
      const user = await findUser(db, auth.userId);
      // Authentication found the user moments ago in this tenant.
      if (!user) throw notFound('User');
      const expiresAt = auth.kind === 'user' ? auth.expiresAt : await apiKeyExpiry(db, auth.apiKeyId);
      return {
        authenticated: true,
        user: { email: user.email, name: user.name, tenant_id: auth.tenantId },
        expires_at: expiresAt && new Date(expiresAt).toISOString(),
      };
    },
  }),
];
