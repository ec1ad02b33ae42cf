import type { Knex } from 'knex';
import { BUILT_IN_ROLES, expandScopes, type Scope } from '../auth/permissions';
import { UUID } from '../ids';

// Who a notification goes to, read in the tenant's transaction.

/**
 * The users of the tenant who hold `scope`, whichever way a role reaches them (directly, through
 * a team, through an identity-provider group as of their latest sign-in), as the authenticator
 * resolves a signed-in user's roles (core/auth/store.ts, rolesOfUser).
 */
export async function usersHolding(trx: Knex, scope: Scope): Promise<string[]> {
  const bundles = await trx('role_bundles').select<{ id: string; permissions: string[] }[]>('id', 'permissions');
  const roles = [
    ...Object.entries(BUILT_IN_ROLES).map(([key, role]) => ({
      key,
      permissions: role.permissions as readonly string[],
    })),
    ...bundles.map((bundle) => ({ key: bundle.id, permissions: bundle.permissions })),
  ]
    .filter((role) => expandScopes(role.permissions).has(scope))
    .map((role) => role.key);
  return usersWithRoles(trx, roles);
}

/** The users of the tenant who hold any of `roles` (keys: built-in names, role bundle ids), however it reaches them. */
export async function usersWithRoles(trx: Knex, roles: string[]): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(
    `select u.id from users u
      where exists (select from user_roles r where r.user_id = u.id and r.role = any(:roles))
         or exists (select from team_members m join team_roles tr on tr.team_id = m.team_id
                     where m.user_id = u.id and tr.role = any(:roles))
         or exists (select from team_group_mappings g join team_roles tr on tr.team_id = g.team_id
                     where g.group_name = any(u.idp_groups) and tr.role = any(:roles))
         or exists (select from group_roles gr where gr.group_name = any(u.idp_groups) and gr.role = any(:roles))`,
    { roles },
  );
  return rows.map((row) => row.id);
}

/** The users an assignee names: a user by email, or a team by slug (its members). */
export async function usersAssigned(trx: Knex, assignee: string): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(
    `select u.id from users u where u.email = :assignee
     union
     select m.user_id from team_members m join teams t on t.id = m.team_id where t.slug = :assignee`,
    { assignee },
  );
  return rows.map((row) => row.id);
}

/**
 * The user an audit actor names (`actorOf`): a user by email, an API key's owner; undefined for
 * anything else (an agent, a deleted user).
 */
export async function userOfActor(trx: Knex, actor: string): Promise<string | undefined> {
  const keyId = /^api-key:(.+)$/.exec(actor)?.[1];
  if (keyId !== undefined && !UUID.test(keyId)) return undefined;
  const row = keyId
    ? await trx('api_keys').where({ id: keyId }).first<{ user_id: string } | undefined>('user_id')
    : await trx('users').where({ email: actor }).first<{ user_id: string } | undefined>('id as user_id');
  return row?.user_id;
}
