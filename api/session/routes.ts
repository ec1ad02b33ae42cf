import type { Knex } from 'knex';
import type { CallerPrincipal } from '../auth/authenticate';
import { defineRoute } from '../http/route';

async function userProfile(db: Knex, auth: CallerPrincipal) {
  const user = await db('users').where({ id: auth.userId }).first('id', 'email', 'name', 'picture');
  const groups = auth.kind === 'user' ? auth.groups : [];
  const teams = await db('teams')
    .whereIn('id', db('team_members').where({ user_id: auth.userId }).select('team_id'))
    .orWhereIn('id', db('team_group_mappings').whereIn('group_name', groups).select('team_id'))
    .orderBy('slug')
    .pluck('slug');
  return { user, groups, teams };
}

export const sessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    tag: 'Users',
    access: 'authenticated',
    summary: 'The current user: profile, tenant, teams, identity-provider groups and roles',
    responses: { 200: { description: 'Current user' } },
    handler: async ({ db, auth }) => {
      const { user, groups, teams } = await userProfile(db, auth);
      return {
        id: user.id,
        email: user.email,
        name: user.name,
        picture: user.picture,
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
